import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Rendering every picture takes a few seconds on a busy machine.
    testTimeout: 60_000,
  },
});
