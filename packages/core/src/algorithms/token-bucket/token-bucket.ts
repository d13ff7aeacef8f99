/**
 * The token bucket in TypeScript: the reference that `token-bucket.lua.ts` mirrors line for line.
 *
 * State: `[levelUnits, atMs]`. Levels are kept in *units*: one token is `windowMs` units and each
 * millisecond refills `limit` units, so with whole-millisecond clocks and whole costs every number is an
 * integer and no rounding can admit an extra request.
 */
import type { Algorithm } from '../algorithm.js';
import { isNearLimit } from '../near-limit.js';

export const tokenBucket: Algorithm = {
  name: 'token-bucket',
  code: 1,
  fields: 2,

  validate() {},

  current(policy, st, o, stored, nowMs) {
    if (!stored) {
      st[o] = policy.capacityUnits;
      st[o + 1] = nowMs;
      return;
    }
    // A clock that stepped back keeps the stored time, so no millisecond of refill is counted twice.
    const atMs = st[o + 1] as number;
    st[o] = Math.min(policy.capacityUnits, (st[o] as number) + Math.max(0, nowMs - atMs) * policy.limit);
    if (atMs < nowMs) st[o + 1] = nowMs;
  },

  fits(policy, st, o, cost) {
    return (st[o] as number) >= cost * policy.windowMs;
  },

  fitsWithin(policy, st, o, cost, maxWaitMs) {
    const costUnits = cost * policy.windowMs;
    const level = st[o] as number;
    // Owed no deeper than `maxWaitMs` of refill repays, and no deeper than `apply` can count: a charge
    // that `apply` would cut short would admit what it did not count.
    return (
      costUnits <= policy.capacityUnits &&
      costUnits - level <= maxWaitMs * policy.limit &&
      level - costUnits >= policy.capacityUnits - Number.MAX_SAFE_INTEGER
    );
  },

  owedMs(policy, st, o) {
    const level = st[o] as number;
    return level < 0 ? Math.ceil(-level / policy.limit) : 0;
  },

  apply(policy, st, o, cost) {
    // A debt stops where the time to repay it would no longer be a whole number of ms a store can count.
    st[o] = Math.max(
      policy.capacityUnits - Number.MAX_SAFE_INTEGER,
      (st[o] as number) - cost * policy.windowMs,
    );
  },

  refund(policy, st, o, cost, sinceMs, nowMs) {
    // What refilled since the charge would have come back anyway: only the rest is still held by it.
    const heldUnits = cost * policy.windowMs - Math.max(0, nowMs - sinceMs) * policy.limit;
    if (heldUnits > 0) st[o] = Math.min(policy.capacityUnits, (st[o] as number) + heldUnits);
  },

  rebase(from, to, st, o, endsMs, beforeMs) {
    const atMs = st[o + 1] as number;
    if (atMs >= beforeMs) return;
    let level = Math.min(from.capacityUnits, (st[o] as number) + Math.max(0, endsMs - atMs) * from.limit);
    // What was used stays used: a level owed stays owed, one held is what the new burst leaves of it.
    if (level >= 0)
      level = Math.min(to.capacityUnits, Math.max(0, level + to.capacityUnits - from.capacityUnits));
    st[o] = level;
    st[o + 1] = Math.max(atMs, endsMs);
  },

  waitMs(policy, st, o, cost) {
    const costUnits = cost * policy.windowMs;
    if (costUnits > policy.capacityUnits) return undefined;
    return Math.max(0, Math.ceil((costUnits - (st[o] ?? 0)) / policy.limit));
  },

  restart(policy, st, o, cost) {
    // The refused cost is charged as debt, down to one full bucket owed: a client that keeps knocking
    // keeps owing, and one that stops is whole again within (capacity + cost) of refill.
    const costUnits = cost * policy.windowMs;
    if (costUnits <= policy.capacityUnits) {
      st[o] = Math.max(-policy.capacityUnits, (st[o] as number) - costUnits);
    }
  },

  idleMs(policy, st, o, nowMs) {
    const level = st[o] as number;
    if (level >= policy.capacityUnits) return 0;
    return (st[o + 1] as number) - nowMs + Math.ceil((policy.capacityUnits - level) / policy.limit);
  },

  describe(policy, st, o, cost, nowMs) {
    const level = st[o] ?? 0;
    const { name, limit, windowMs, capacity, capacityUnits } = policy;
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
      retryAfterMs: tokenBucket.waitMs(policy, st, o, cost, nowMs),
      nearLimit: isNearLimit(policy, remaining),
    };
  },
};
