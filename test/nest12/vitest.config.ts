/**
 * Vitest for `test/frameworks/nestjs*.test.ts` on Nest 12, and for `contexts/` (the guard in GraphQL,
 * WebSocket and microservice handlers, whose Nest packages only this package installs). The first, and
 * `@tollgate/nestjs`'s source, sit outside this package: Vite resolves a bare import from the importing file's folder up, which would
 * find `test/`'s Nest 11. Each Nest package is therefore aliased to this package's copy; Nest's packages
 * import one another by name from there, so the whole app runs on one Nest 12.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const NEST_PACKAGES = [
  'common',
  'core',
  'platform-express',
  'platform-fastify',
  'testing',
  // What `@tollgate/nestjs` loads when the guard first meets a gateway's or a microservice's message.
  'websockets',
  'microservices',
] as const;

/**
 * What examples/nestjs-graphql imports besides those, resolved from here: the example, tested from
 * `contexts/example.test.ts`, then needs no install of its own to be tested.
 */
const EXAMPLE_PACKAGES = [
  '@nestjs/apollo',
  '@nestjs/graphql',
  '@nestjs/platform-ws',
  '@tollgate/nestjs',
  'reflect-metadata',
] as const;

const nest12 = [...NEST_PACKAGES.map((name) => `@nestjs/${name}`), ...EXAMPLE_PACKAGES].map((name) => ({
  // Exactly the package's name: a subpath (`@nestjs/core/package.json`) resolves as usual.
  find: new RegExp(`^${name}$`),
  replacement: fileURLToPath(import.meta.resolve(name)),
}));

export default defineConfig({
  resolve: { alias: nest12 },
  test: {
    // This package holds no test file of its own (`test/`'s run would pick it up): it runs these.
    dir: '..',
    // contexts/: the guard in GraphQL resolvers, gateways and microservices, on Nest 12 only.
    include: ['frameworks/nestjs*.test.ts', 'nest12/contexts/*.test.ts'],
    globalSetup: ['./global-setup.ts'],
    setupFiles: ['./on-nest12.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
