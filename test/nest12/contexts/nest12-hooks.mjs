/**
 * Node.js resolve hooks for the worker processes of this folder (`node --import tsx --import
 * ./nest12-hooks.mjs worker.ts`): a `@nestjs/*` package imported by the workspace's own source is
 * resolved from this package, so that `@tollgate/nestjs`, which sits outside it, runs on the same Nest 12
 * as the app, as the aliases of `vitest.config.ts` arrange for the tests themselves. Installed packages
 * resolve their own dependencies as usual.
 */
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const FROM_NEST12 = new URL('../package.json', import.meta.url).href;

// Imported by `--import`, this module registers itself; Node.js then loads it again, off the main
// thread, for its `resolve`.
if (isMainThread) register(import.meta.url);

/** Resolves a Nest package's name (not a subpath), imported from outside node_modules, from this package. */
export async function resolve(specifier, context, next) {
  const fromSource = context.parentURL !== undefined && !context.parentURL.includes('/node_modules/');
  return fromSource && /^@nestjs\/[^/]+$/.test(specifier)
    ? next(specifier, { ...context, parentURL: FROM_NEST12 })
    : next(specifier, context);
}
