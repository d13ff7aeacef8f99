/**
 * The sliding window in Lua, for the Redis script: `sliding-window.ts` step for step (`st[o]` the current
 * window's start, aligned to the clock, `st[o + 1]` the previous window's count, `st[o + 2]` the current
 * one's). The estimate is compared times the window, in whole numbers.
 */
import type { AlgorithmLua } from '../algorithm.js';

export const SLIDING_WINDOW_LUA: AlgorithmLua = {
  current: `
    local start = floor(now / window) * window
    if not stored then st[o], st[o + 1], st[o + 2] = start, 0, 0 return end
    -- A clock that stepped back keeps the stored windows.
    if start <= st[o] then return end
    if start == st[o] + window then st[o], st[o + 1], st[o + 2] = start, st[o + 2], 0 return end
    st[o], st[o + 1], st[o + 2] = start, 0, 0`,
  fits: `
    -- The previous window's count, weighted by what the sliding window still covers of it.
    local elapsed = min(window, max(0, now - st[o]))
    return st[o + 1] * (window - elapsed) + (st[o + 2] + cost) * window <= limit * window`,
  apply: `
    st[o + 2] = max(0, st[o + 2] - sign * cost)`,
  idle: `
    if st[o + 2] > 0 then return st[o] + 2 * window - now end
    if st[o + 1] > 0 then return st[o] + window - now end
    return 0`,
};
