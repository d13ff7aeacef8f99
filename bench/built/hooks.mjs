/**
 * Module hooks (see register.mjs): `@tollgate/<package>` resolves to that package's built `dist`, in this
 * checkout or in the one register.mjs was given (`--against`). The built packages' own imports of each
 * other resolve here too, so a process never mixes two builds.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const BUILT = new Set(['core', 'express', 'fastify', 'koa']);

let packages = new URL('../../packages/', import.meta.url);

export function initialize({ checkout } = {}) {
  if (checkout) packages = new URL('packages/', pathToFileURL(`${checkout}/`));
}

export async function resolve(specifier, context, nextResolve) {
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
