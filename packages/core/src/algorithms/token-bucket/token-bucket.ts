/**
 * The token bucket in TypeScript: the reference that `token-bucket.lua.ts` mirrors line for line.
 *
 * State: `[levelUnits, atMs]`. Levels are kept in *units*: one token is `windowMs` units and each
 * millisecond refills `limit` units, so with whole-millisecond clocks and whole costs every number is an
 * integer and no rounding can admit an extra request.
 */
import type { Algorithm } from '../algorithm.js';

export const tokenBucket: Algorithm = {
  name: 'token-bucket',
  code: 1,
  fields: 2,

  validate() {},

  current(policy, stored, nowMs) {
    if (stored === undefined) return [policy.capacityUnits, nowMs];
    const [level = 0, atMs = nowMs] = stored;
    // A clock that stepped back keeps the stored time, so no millisecond of refill is counted twice.
    const refilled = level + Math.max(0, nowMs - atMs) * policy.limit;
    return [Math.min(policy.capacityUnits, refilled), Math.max(nowMs, atMs)];
  },

  fits(policy, [level = 0], cost) {
    return level >= cost * policy.windowMs;
  },

  apply(policy, [level = 0, atMs = 0], cost, sign) {
    return [Math.min(policy.capacityUnits, level + sign * cost * policy.windowMs), atMs];
  },

  idleMs(policy, [level = 0, atMs = 0], nowMs) {
    if (level >= policy.capacityUnits) return 0;
    return atMs - nowMs + Math.ceil((policy.capacityUnits - level) / policy.limit);
  },

  describe(policy, [level = 0], cost) {
    const { name, limit, windowMs, capacity, capacityUnits } = policy;
    const costUnits = cost * windowMs;
    // A bucket in debt (a penalty) has nothing left, not a negative amount.
    const remaining = Math.max(0, Math.floor(level / windowMs));
    return {
      policy: name,
      algorithm: 'token-bucket',
      limit,
      windowMs,
      capacity,
      remaining,
      resetMs: Math.ceil((capacityUnits - level) / limit),
      nextTokenMs: Math.ceil(((remaining + 1) * windowMs - level) / limit),
      retryAfterMs:
        costUnits > capacityUnits ? undefined : Math.max(0, Math.ceil((costUnits - level) / limit)),
    };
  },
};
