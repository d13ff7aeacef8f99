import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // Node.js loads graphql 16 as CommonJS for the GraphQL servers (it has no exports map); Vite would
    // load its ESM build for the tests' own imports, and graphql refuses types from a second copy.
    alias: [{ find: /^graphql$/, replacement: createRequire(import.meta.url).resolve('graphql') }],
  },
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
