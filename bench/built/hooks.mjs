/**
 * Module hooks (see register.mjs): `@tollgate/<package>` resolves to that package's built `dist`, in this
 * checkout or in the one register.mjs was given (`--against`). The built packages' own imports of each
 * other resolve here too, so a process never mixes two builds; their imports of Nest resolve to the bench's.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const BUILT = new Set(['core', 'express', 'fastify', 'koa', 'fetch', 'hono', 'nestjs']);

let packages = new URL('../../packages/', import.meta.url);

/**
 * Peers that a process must hold one copy of: Nest's classes are its injection tokens, and its exception
 * filter knows an `HttpException` by `instanceof`. A built package imports the bench's own, as an installed
 * package gets its app's; otherwise an `--against` checkout's `dist` would bring a Nest of its own.
 */
const SHARED_PEER = /^(?:@nestjs\/[a-z-]+|reflect-metadata|rxjs)(?:\/|$)/;
const BENCH_PARENT = new URL('../package.json', import.meta.url).href;

export function initialize({ checkout } = {}) {
  if (checkout) packages = new URL('packages/', pathToFileURL(`${checkout}/`));
}

export async function resolve(specifier, context, nextResolve) {
  if (SHARED_PEER.test(specifier) && context.parentURL?.startsWith(packages.href)) {
    return nextResolve(specifier, { ...context, parentURL: BENCH_PARENT });
  }
  const name = /^@tollgate\/([a-z]+)$/.exec(specifier)?.[1];
  if (name === undefined || !BUILT.has(name)) return nextResolve(specifier, context);
  const url = new URL(`${name}/dist/index.mjs`, packages);
  if (!existsSync(fileURLToPath(url))) {
    throw new Error(
      `@tollgate/${name} is not built in ${fileURLToPath(packages)}: run pnpm build there (pnpm bench builds this checkout's)`,
    );
  }
  return { url: url.href, shortCircuit: true };
}
