import { defineConfig } from 'tsdown';

export default defineConfig({
  entry: ['src/index.ts', 'src/adapter.ts', 'src/app-exports.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
});
