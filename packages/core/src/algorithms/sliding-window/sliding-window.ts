/**
 * The sliding window in TypeScript: the reference that `sliding-window.lua.ts` mirrors line for line.
 *
 * State: `[windowStartMs, previousCount, currentCount]`, windows aligned to the epoch. The estimate of
 * what the last `windowMs` held is `previous × (windowMs − elapsed) / windowMs + current`, where `elapsed`
 * is how far the current window has run: the previous window counts as far as the sliding window still
 * covers it, assuming its requests were spread evenly. Comparisons are made times `windowMs`, so whole
 * counts and whole-millisecond clocks keep every number an integer.
 *
 * The error bound: the estimate is exact when the previous window's requests were spread evenly. If they
 * crowded at its end, the estimate forgets them too early, and a true sliding window of `windowMs` could
 * see up to (but never) `2 × limit`; crowded at its start, the estimate remembers them too long and
 * admits less. Cloudflare measured 0.003% of requests wrongly admitted or refused on real traffic.
 */

import { TollgateOptionError } from '../../support/option-error.js';
import type { Algorithm, StateFields } from '../algorithm.js';
import { isNearLimit } from '../near-limit.js';

/** The estimate times `windowMs` at `atMs` (clamped to the current window), of the state at `o`. */
function weighted(windowMs: number, st: StateFields, o: number, atMs: number): number {
  const elapsedMs = Math.min(windowMs, Math.max(0, atMs - (st[o] ?? 0)));
  return (st[o + 1] ?? 0) * (windowMs - elapsedMs) + (st[o + 2] ?? 0) * windowMs;
}

/**
 * Ms from `nowMs` until the estimate times `windowMs` is at most `allowed`: within this window the
 * previous count's weight falls by `previous` a ms; after it, the current count becomes the previous one.
 * `undefined` when `allowed` is negative (no wait will do).
 */
function waitUntil(
  windowMs: number,
  st: StateFields,
  o: number,
  allowed: number,
  nowMs: number,
): number | undefined {
  if (allowed < 0) return undefined;
  const start = st[o] ?? 0;
  const previous = st[o + 1] ?? 0;
  const current = st[o + 2] ?? 0;
  const from = Math.max(nowMs, start);
  if (weighted(windowMs, st, o, from) <= allowed) return from - nowMs;
  const end = start + windowMs;
  if (previous > 0 && allowed - current * windowMs >= 0) {
    const at = Math.ceil(end - (allowed - current * windowMs) / previous);
    if (at < end) return Math.max(at, from) - nowMs;
  }
  if (current === 0) return end - nowMs;
  return Math.max(end, Math.ceil(end + windowMs - allowed / current)) - nowMs;
}

export const slidingWindow: Algorithm = {
  name: 'sliding-window',
  code: 3,
  fields: 3,

  validate(policy, where) {
    if (policy.capacity !== policy.limit) {
      throw new TollgateOptionError(
        `${where}.burst applies to the token bucket only; a sliding window holds \`limit\``,
      );
    }
  },

  current(policy, st, o, stored, nowMs) {
    const { windowMs } = policy;
    const start = Math.floor(nowMs / windowMs) * windowMs;
    const storedStart = st[o] as number;
    // A clock that stepped back keeps the stored windows.
    if (stored && start <= storedStart) return;
    st[o + 1] = stored && start === storedStart + windowMs ? (st[o + 2] as number) : 0;
    st[o] = start;
    st[o + 2] = 0;
  },

  fits(policy, st, o, cost, nowMs) {
    const { limit, windowMs } = policy;
    return weighted(windowMs, st, o, nowMs) + cost * windowMs <= limit * windowMs;
  },

  apply(_policy, st, o, cost) {
    st[o + 2] = (st[o + 2] as number) + cost;
  },

  refund(policy, st, o, cost, sinceMs) {
    // The charge is taken back from the window that counted it: the current one, or the previous one
    // (whose weight in the estimate is what is left of it); one older than that counts no more.
    const start = st[o] as number;
    const chargedIn = Math.floor(sinceMs / policy.windowMs) * policy.windowMs;
    if (chargedIn >= start) st[o + 2] = Math.max(0, (st[o + 2] as number) - cost);
    else if (chargedIn === start - policy.windowMs) st[o + 1] = Math.max(0, (st[o + 1] as number) - cost);
  },

  rebase() {
    // Its counts are what the client used, whatever the limit: they stand as they are.
  },

  waitMs(policy, st, o, cost, nowMs) {
    const { limit, windowMs } = policy;
    return waitUntil(windowMs, st, o, (limit - cost) * windowMs, nowMs);
  },

  restart(policy, st, o, cost) {
    // The refused cost is counted in the current window as if admitted, up to `limit`: the estimate stays
    // full while the client keeps knocking, and empties over the next window once it stops.
    if (cost <= policy.limit) st[o + 2] = Math.min(policy.limit, (st[o + 2] as number) + cost);
  },

  idleMs(policy, st, o, nowMs) {
    const start = st[o] as number;
    if ((st[o + 2] as number) > 0) return start + 2 * policy.windowMs - nowMs;
    return (st[o + 1] as number) > 0 ? start + policy.windowMs - nowMs : 0;
  },

  describe(policy, st, o, cost, nowMs) {
    const { name, limit, windowMs } = policy;
    const free = limit * windowMs - weighted(windowMs, st, o, nowMs);
    const remaining = Math.max(0, Math.floor(free / windowMs));
    const needed = (tokens: number) => waitUntil(windowMs, st, o, (limit - tokens) * windowMs, nowMs);
    return {
      policy: name,
      algorithm: 'sliding-window',
      limit,
      windowMs,
      capacity: limit,
      remaining,
      resetMs: needed(limit) ?? 0,
      nextTokenMs: needed(remaining + 1) ?? windowMs,
      retryAfterMs: slidingWindow.waitMs(policy, st, o, cost, nowMs),
      nearLimit: isNearLimit(policy, remaining),
    };
  },
};
