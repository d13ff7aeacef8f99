/**
 * The fixed window in TypeScript: the reference that `fixed-window.lua.ts` mirrors line for line.
 *
 * State: `[windowStartMs, count]`. A client's window starts at its first request and lasts `windowMs`;
 * at most `limit` tokens are counted in it. Counts are tokens, so whole costs keep them whole.
 */

import { TollgateOptionError } from '../../support/option-error.js';
import type { Algorithm } from '../algorithm.js';
import { isNearLimit } from '../near-limit.js';

export const fixedWindow: Algorithm = {
  name: 'fixed-window',
  code: 2,
  fields: 2,

  validate(policy, where) {
    if (policy.capacity !== policy.limit) {
      throw new TollgateOptionError(
        `${where}.burst applies to the token bucket only; a fixed window holds \`limit\``,
      );
    }
  },

  current(policy, st, o, stored, nowMs) {
    // A window that has ended, none yet, or one with nothing counted: a new one starts now. A clock that
    // stepped back keeps the window it is in.
    if (!stored || (st[o + 1] as number) <= 0 || nowMs >= (st[o] as number) + policy.windowMs) {
      st[o] = nowMs;
      st[o + 1] = 0;
    }
  },

  fits(policy, st, o, cost) {
    return (st[o + 1] as number) + cost <= policy.limit;
  },

  apply(_policy, st, o, cost) {
    st[o + 1] = (st[o + 1] as number) + cost;
  },

  refund(_policy, st, o, cost, sinceMs) {
    // A window that began after the charge never counted it.
    if ((st[o] as number) <= sinceMs) st[o + 1] = Math.max(0, (st[o + 1] as number) - cost);
  },

  rebase() {
    // Its counts are what the client used, whatever the limit: they stand as they are.
  },

  waitMs(policy, st, o, cost, nowMs) {
    const { limit, windowMs } = policy;
    if (cost > limit) return undefined;
    return (st[o + 1] ?? 0) + cost <= limit ? 0 : Math.max(0, (st[o] ?? 0) + windowMs - nowMs);
  },

  restart(policy, st, o, cost, nowMs) {
    // The window starts again now, its count kept: the client waits a whole window from its last knock.
    if (cost <= policy.limit) st[o] = nowMs;
  },

  idleMs(policy, st, o, nowMs) {
    const count = st[o + 1] as number;
    return count > 0 ? (st[o] as number) + policy.windowMs - nowMs : 0;
  },

  describe(policy, st, o, cost, nowMs) {
    const startMs = st[o] ?? 0;
    const count = st[o + 1] ?? 0;
    const { name, limit, windowMs } = policy;
    const endMs = Math.max(0, startMs + windowMs - nowMs);
    const remaining = Math.max(0, Math.floor(limit - count));
    return {
      policy: name,
      algorithm: 'fixed-window',
      limit,
      windowMs,
      capacity: limit,
      remaining,
      resetMs: count > 0 ? endMs : 0,
      // Within the window no more than `remaining` may be used; at its end the count starts over.
      nextTokenMs: endMs,
      retryAfterMs: fixedWindow.waitMs(policy, st, o, cost, nowMs),
      nearLimit: isNearLimit(policy, remaining),
    };
  },
};
