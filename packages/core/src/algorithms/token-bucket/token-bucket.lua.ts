/**
 * The token bucket in Lua, for the Redis script: `token-bucket.ts` step for step (`st[o]` the level in
 * units, `st[o + 1]` when it was true). The steps every check takes compare with `if` where a call of
 * `min` or `max` would do the same: in Redis's Lua a call costs more than the arithmetic it wraps.
 */
import type { AlgorithmLua } from '../algorithm.js';

export const TOKEN_BUCKET_LUA: AlgorithmLua = {
  current: `
    if not stored then
      st[o], st[o + 1] = capacity, now
    else
      -- A clock that stepped back keeps the stored time, so no millisecond of refill is counted twice.
      local at = st[o + 1]
      if at < now then st[o], st[o + 1] = st[o] + (now - at) * limit, now end
      if st[o] > capacity then st[o] = capacity end
    end`,
  fits: `
    st[o] >= cost * window`,
  apply: `
    -- A debt stops where the time to repay it would no longer be a whole number of ms a store can count.
    st[o] = st[o] - cost * window
    if st[o] < capacity - 9007199254740991 then st[o] = capacity - 9007199254740991 end`,
  refund: `
    -- What refilled since the charge would have come back anyway: only the rest is still held by it.
    local held = cost * window - max(0, now - since) * limit
    if held > 0 then st[o] = min(capacity, st[o] + held) end`,
  rebase: `
    if st[o + 1] < before then
      local level = min(was, st[o] + max(0, ends - st[o + 1]) * wasLimit)
      -- What was used stays used: a level owed stays owed, one held is what the new burst leaves of it.
      if level >= 0 then level = min(capacity, max(0, level + capacity - was)) end
      st[o], st[o + 1] = level, max(st[o + 1], ends)
    end`,
  wait: `
    if cost * window > capacity then return -1 end
    return max(0, ceil((cost * window - st[o]) / limit))`,
  restart: `
    -- The refused cost is charged as debt, down to one full bucket owed: a client that keeps knocking
    -- keeps owing, and one that stops is whole again within (capacity + cost) of refill.
    if cost * window <= capacity then st[o] = max(-capacity, st[o] - cost * window) end`,
  within: `
    cost * window <= capacity and cost * window - st[o] <= maxWait * limit
      and st[o] - cost * window >= capacity - 9007199254740991`,
  idle: `
    st[o] >= capacity and 0 or st[o + 1] - now + ceil((capacity - st[o]) / limit)`,
  nowField: 2,
};
