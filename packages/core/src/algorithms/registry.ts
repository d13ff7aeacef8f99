/**
 * The algorithms, by name. Adding one: its folder (maths and Lua side by side) and a line in each of the
 * two lists below; nothing else changes.
 */
import type { AlgorithmName } from '../model/policy.js';
import type { Algorithm, AlgorithmLua } from './algorithm.js';
import { fixedWindow } from './fixed-window/fixed-window.js';
import { FIXED_WINDOW_LUA } from './fixed-window/fixed-window.lua.js';
import { slidingWindow } from './sliding-window/sliding-window.js';
import { SLIDING_WINDOW_LUA } from './sliding-window/sliding-window.lua.js';
import { tokenBucket } from './token-bucket/token-bucket.js';
import { TOKEN_BUCKET_LUA } from './token-bucket/token-bucket.lua.js';

/** Every algorithm, by name. */
export const ALGORITHMS = {
  'token-bucket': tokenBucket,
  'fixed-window': fixedWindow,
  'sliding-window': slidingWindow,
} as const satisfies Readonly<Record<AlgorithmName, Algorithm>>;

/** Each algorithm's Lua, for the Redis script (see `stores/redis/script/generate.ts`). */
export const ALGORITHM_LUA: ReadonlyMap<Algorithm, AlgorithmLua> = new Map<Algorithm, AlgorithmLua>([
  [tokenBucket, TOKEN_BUCKET_LUA],
  [fixedWindow, FIXED_WINDOW_LUA],
  [slidingWindow, SLIDING_WINDOW_LUA],
]);

/** The algorithm names, for validation and docs. */
export const ALGORITHM_NAMES = Object.keys(ALGORITHMS) as readonly AlgorithmName[];
