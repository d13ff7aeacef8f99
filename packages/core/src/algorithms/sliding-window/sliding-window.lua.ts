/**
 * The sliding window in Lua, for the Redis script: `sliding-window.ts` step for step (`st[o]` the current
 * window's start, aligned to the clock, `st[o + 1]` the previous window's count, `st[o + 2]` the current
 * one's). The estimate is compared times the window, in whole numbers.
 */
import type { AlgorithmLua } from '../algorithm.js';

export const SLIDING_WINDOW_LUA: AlgorithmLua = {
  current: `
    local start = floor(now / window) * window
    if not stored then
      st[o], st[o + 1], st[o + 2] = start, 0, 0
    elseif start > st[o] then -- a clock that stepped back keeps the stored windows
      if start == st[o] + window then
        st[o], st[o + 1], st[o + 2] = start, st[o + 2], 0
      else
        st[o], st[o + 1], st[o + 2] = start, 0, 0
      end
    end`,
  fits: `
    -- The previous window's count, weighted by what the sliding window still covers of it.
    st[o + 1] * (window - min(window, max(0, now - st[o]))) + (st[o + 2] + cost) * window <= limit * window`,
  apply: `
    st[o + 2] = max(0, st[o + 2] - sign * cost)`,
  idle: `
    st[o + 2] > 0 and st[o] + 2 * window - now
      or st[o + 1] > 0 and st[o] + window - now
      or 0`,
};
