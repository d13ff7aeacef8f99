/**
 * The fixed window in Lua, for the Redis script: `fixed-window.ts` line for line. The state `st` is
 * `{ windowStartMs, count }`; `p` is `{ limit, window, capacity }`.
 */
export const FIXED_WINDOW_LUA = `
ALG[2] = {
  fields = 2,
  current = function(p, st, now)
    -- A window that has ended, none yet, or one with nothing counted: a new one starts now. A clock that
    -- stepped back keeps the window it is in.
    if not st or st[2] <= 0 or now >= st[1] + p.window then return { now, 0 } end
    return { st[1], st[2] }
  end,
  fits = function(p, st, cost)
    return st[2] + cost <= p.limit
  end,
  apply = function(p, st, cost, sign)
    return { st[1], math.max(0, st[2] - sign * cost) }
  end,
  idle = function(p, st, now)
    if st[2] > 0 then return st[1] + p.window - now end
    return 0
  end,
}
`;
