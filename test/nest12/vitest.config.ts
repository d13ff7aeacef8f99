/**
 * Vitest for `test/frameworks/nestjs*.test.ts` on Nest 12. Those files, and `@tollgate/nestjs`'s source,
 * sit outside this package: Vite resolves a bare import from the importing file's folder up, which would
 * find `test/`'s Nest 11. Each Nest package is therefore aliased to this package's copy; Nest's packages
 * import one another by name from there, so the whole app runs on one Nest 12.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const NEST_PACKAGES = ['common', 'core', 'platform-express', 'platform-fastify', 'testing'] as const;

const nest12 = NEST_PACKAGES.map((name) => ({
  // Exactly the package's name: a subpath (`@nestjs/core/package.json`) resolves as usual.
  find: new RegExp(`^@nestjs/${name}$`),
  replacement: fileURLToPath(import.meta.resolve(`@nestjs/${name}`)),
}));

export default defineConfig({
  resolve: { alias: nest12 },
  test: {
    // This package holds no test file of its own (`test/`'s run would pick it up): it runs these.
    dir: '..',
    include: ['frameworks/nestjs*.test.ts'],
    globalSetup: ['./global-setup.ts'],
    setupFiles: ['./on-nest12.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
