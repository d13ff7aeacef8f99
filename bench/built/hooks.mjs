/** Module hooks (see register.mjs): `@tollgate/<package>` resolves to that package's built `dist`. */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const PACKAGES = new URL('../../packages/', import.meta.url);
const BUILT = new Set(['core', 'express', 'fastify', 'koa']);

export async function resolve(specifier, context, nextResolve) {
  const name = /^@tollgate\/([a-z]+)$/.exec(specifier)?.[1];
  if (name === undefined || !BUILT.has(name)) return nextResolve(specifier, context);
  const url = new URL(`${name}/dist/index.mjs`, PACKAGES);
  if (!existsSync(fileURLToPath(url))) {
    throw new Error(`@tollgate/${name} is not built: run pnpm build (pnpm bench does) before the bench`);
  }
  return { url: url.href, shortCircuit: true };
}
