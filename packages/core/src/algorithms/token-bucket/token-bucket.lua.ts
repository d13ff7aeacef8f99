/**
 * The token bucket in Lua, for the Redis script: `token-bucket.ts` line for line. The state `st` is
 * `{ levelUnits, atMs }`; `p` is `{ limit, window, capacity }` with the capacity in units.
 */
export const TOKEN_BUCKET_LUA = `
ALG[1] = {
  fields = 2,
  current = function(p, st, now)
    if not st then return { p.capacity, now } end
    -- A clock that stepped back keeps the stored time, so no millisecond of refill is counted twice.
    local refilled = st[1] + math.max(0, now - st[2]) * p.limit
    return { math.min(p.capacity, refilled), math.max(now, st[2]) }
  end,
  fits = function(p, st, cost)
    return st[1] >= cost * p.window
  end,
  apply = function(p, st, cost, sign)
    return { math.min(p.capacity, st[1] + sign * cost * p.window), st[2] }
  end,
  idle = function(p, st, now)
    if st[1] >= p.capacity then return 0 end
    return st[2] - now + math.ceil((p.capacity - st[1]) / p.limit)
  end,
}
`;
