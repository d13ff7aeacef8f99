import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    // nest12/ runs the NestJS suites again on Nest 12, and runtimes/ serves the Web adapters on Bun, Deno and
    // workerd, each as its own package.
    exclude: ['**/node_modules/**', 'nest12/**', 'runtimes/**'],
    globalSetup: ['./harness/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
