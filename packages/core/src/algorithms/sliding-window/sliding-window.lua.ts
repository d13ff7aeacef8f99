/**
 * The sliding window in Lua, for the Redis script: `sliding-window.ts` step for step, on the flat state
 * array `st` at offset `o` (`st[o]` the current window's start, aligned to the clock, `st[o + 1]` the
 * previous window's count, `st[o + 2]` the current one's), changed in place. `p` is
 * `{ code, limit, window, capacity }`. The estimate is compared times the window, in whole numbers.
 */
export const SLIDING_WINDOW_LUA = `
ALG[3] = {
  fields = 3,
  current = function(p, st, o, stored, now)
    local window = p[3]
    local start = math.floor(now / window) * window
    if not stored then st[o], st[o + 1], st[o + 2] = start, 0, 0 return end
    -- A clock that stepped back keeps the stored windows.
    if start <= st[o] then return end
    if start == st[o] + window then st[o], st[o + 1], st[o + 2] = start, st[o + 2], 0 return end
    st[o], st[o + 1], st[o + 2] = start, 0, 0
  end,
  fits = function(p, st, o, cost, now)
    -- The previous window's count, weighted by what the sliding window still covers of it.
    local window = p[3]
    local elapsed = math.min(window, math.max(0, now - st[o]))
    return st[o + 1] * (window - elapsed) + (st[o + 2] + cost) * window <= p[2] * window
  end,
  apply = function(p, st, o, cost, sign)
    st[o + 2] = math.max(0, st[o + 2] - sign * cost)
  end,
  idle = function(p, st, o, now)
    if st[o + 2] > 0 then return st[o] + 2 * p[3] - now end
    if st[o + 1] > 0 then return st[o] + p[3] - now end
    return 0
  end,
}
`;
