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
    st[o + 2] = st[o + 2] + cost`,
  refund: `
    -- The charge is taken back from the window that counted it: the current one, or the previous one
    -- (whose weight in the estimate is what is left of it); one older than that counts no more.
    local charged = floor(since / window) * window
    if charged >= st[o] then
      st[o + 2] = max(0, st[o + 2] - cost)
    elseif charged == st[o] - window then
      st[o + 1] = max(0, st[o + 1] - cost)
    end`,
  rebase: '',
  wait: `
    -- waitUntil() in sliding-window.ts: ms until the estimate times the window is at most allowed.
    local allowed = (limit - cost) * window
    if allowed < 0 then return -1 end
    local start, previous, current = st[o], st[o + 1], st[o + 2]
    local from = max(now, start)
    if previous * (window - min(window, max(0, from - start))) + current * window <= allowed then
      return from - now
    end
    local finish = start + window
    if previous > 0 and allowed - current * window >= 0 then
      local at = ceil(finish - (allowed - current * window) / previous)
      if at < finish then return max(at, from) - now end
    end
    if current == 0 then return finish - now end
    return max(finish, ceil(finish + window - allowed / current)) - now`,
  restart: `
    -- The refused cost is counted in the current window as if admitted, up to limit: the estimate stays
    -- full while the client keeps knocking, and empties over the next window once it stops.
    if cost <= limit then st[o + 2] = min(limit, st[o + 2] + cost) end`,
  idle: `
    st[o + 2] > 0 and st[o] + 2 * window - now
      or st[o + 1] > 0 and st[o] + window - now
      or 0`,
  // A current window that goes on, with a count: its state was written to expire a window after its end.
  expiryKept: `
    st[o + 2] > 0 and now < st[o] + window`,
};
