import { fileURLToPath } from 'node:url';

/** `--import` this in a bench child process so that it runs Tollgate's built packages (see register.mjs). */
export const BUILT_PACKAGES = fileURLToPath(new URL('./register.mjs', import.meta.url));

/** Which Tollgate a bench process runs: this checkout's built packages, or those of `--against=DIR`. */
export type Build = 'this' | 'against';

/**
 * The environment variable register.mjs reads: the checkout whose `packages/<name>/dist` the process
 * loads. Unset: this checkout.
 */
const CHECKOUT_ENV = 'TOLLGATE_BENCH_CHECKOUT';

/** The environment of a child process that runs `checkout`'s built packages (this checkout's: undefined). */
export function builtPackagesEnv(checkout: string | undefined): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env[CHECKOUT_ENV];
  return checkout === undefined ? env : { ...env, [CHECKOUT_ENV]: checkout };
}
