/**
 * The token bucket in Lua, for the Redis script: `token-bucket.ts` step for step, on the flat state array
 * `st` at offset `o` (`st[o]` the level in units, `st[o + 1]` when it was true), changed in place so a
 * check allocates nothing per policy. `p` is `{ code, limit, window, capacity }`, the capacity in units.
 */
export const TOKEN_BUCKET_LUA = `
ALG[1] = {
  fields = 2,
  current = function(p, st, o, stored, now)
    if not stored then st[o], st[o + 1] = p[4], now return end
    -- A clock that stepped back keeps the stored time, so no millisecond of refill is counted twice.
    local at = st[o + 1]
    st[o] = math.min(p[4], st[o] + math.max(0, now - at) * p[2])
    if at < now then st[o + 1] = now end
  end,
  fits = function(p, st, o, cost)
    return st[o] >= cost * p[3]
  end,
  apply = function(p, st, o, cost, sign)
    st[o] = math.min(p[4], st[o] + sign * cost * p[3])
  end,
  idle = function(p, st, o, now)
    if st[o] >= p[4] then return 0 end
    return st[o + 1] - now + math.ceil((p[4] - st[o]) / p[2])
  end,
}
`;
