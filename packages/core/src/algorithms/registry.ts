/**
 * The algorithms, by name. Adding one: its folder (maths and Lua side by side) and a line in each of the
 * two lists below; nothing else changes.
 */
import type { Algorithm, AlgorithmName } from './algorithm.js';
import { fixedWindow } from './fixed-window/fixed-window.js';
import { FIXED_WINDOW_LUA } from './fixed-window/fixed-window.lua.js';
import { slidingWindow } from './sliding-window/sliding-window.js';
import { SLIDING_WINDOW_LUA } from './sliding-window/sliding-window.lua.js';
import { tokenBucket } from './token-bucket/token-bucket.js';
import { TOKEN_BUCKET_LUA } from './token-bucket/token-bucket.lua.js';

/** Every algorithm, by name. */
export const ALGORITHMS: Readonly<Record<AlgorithmName, Algorithm>> = {
  'token-bucket': tokenBucket,
  'fixed-window': fixedWindow,
  'sliding-window': slidingWindow,
};

/** Each algorithm's Lua, defining `ALGORITHMS[code]` for the script (see `script.lua.ts`). */
export const ALGORITHM_LUA: readonly string[] = [TOKEN_BUCKET_LUA, FIXED_WINDOW_LUA, SLIDING_WINDOW_LUA];

/** The algorithm names, for validation and docs. */
export const ALGORITHM_NAMES = Object.keys(ALGORITHMS) as readonly AlgorithmName[];
