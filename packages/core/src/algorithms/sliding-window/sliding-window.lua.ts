/**
 * The sliding window in Lua, for the Redis script: `sliding-window.ts` line for line. The state `st` is
 * `{ windowStartMs, previousCount, currentCount }`, windows aligned to the epoch; `p` is
 * `{ limit, window, capacity }`. The estimate is compared times `window`, in whole numbers.
 */
export const SLIDING_WINDOW_LUA = `
-- The estimate times the window at now: the previous count weighted by what the sliding window still covers.
local function weighted(p, st, now)
  local elapsed = math.min(p.window, math.max(0, now - st[1]))
  return st[2] * (p.window - elapsed) + st[3] * p.window
end
ALG[3] = {
  fields = 3,
  current = function(p, st, now)
    local start = math.floor(now / p.window) * p.window
    if not st then return { start, 0, 0 } end
    -- A clock that stepped back keeps the stored windows.
    if start <= st[1] then return { st[1], st[2], st[3] } end
    if start == st[1] + p.window then return { start, st[3], 0 } end
    return { start, 0, 0 }
  end,
  fits = function(p, st, cost, now)
    return weighted(p, st, now) + cost * p.window <= p.limit * p.window
  end,
  apply = function(p, st, cost, sign)
    return { st[1], st[2], math.max(0, st[3] - sign * cost) }
  end,
  idle = function(p, st, now)
    if st[3] > 0 then return st[1] + 2 * p.window - now end
    if st[2] > 0 then return st[1] + p.window - now end
    return 0
  end,
}
`;
