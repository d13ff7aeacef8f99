import { fileURLToPath } from 'node:url';

/** `--import` this in a bench child process so that it runs Tollgate's built packages (see register.mjs). */
export const BUILT_PACKAGES = fileURLToPath(new URL('./register.mjs', import.meta.url));
