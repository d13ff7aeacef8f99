/**
 * The fixed window in Lua, for the Redis script: `fixed-window.ts` step for step, on the flat state array
 * `st` at offset `o` (`st[o]` the window's start, `st[o + 1]` its count), changed in place. `p` is
 * `{ code, limit, window, capacity }`.
 */
export const FIXED_WINDOW_LUA = `
ALG[2] = {
  fields = 2,
  current = function(p, st, o, stored, now)
    -- A window that has ended, none yet, or one with nothing counted: a new one starts now. A clock that
    -- stepped back keeps the window it is in.
    if not stored or st[o + 1] <= 0 or now >= st[o] + p[3] then st[o], st[o + 1] = now, 0 end
  end,
  fits = function(p, st, o, cost)
    return st[o + 1] + cost <= p[2]
  end,
  apply = function(p, st, o, cost, sign)
    st[o + 1] = math.max(0, st[o + 1] - sign * cost)
  end,
  idle = function(p, st, o, now)
    if st[o + 1] > 0 then return st[o] + p[3] - now end
    return 0
  end,
}
`;
