/**
 * Exponential backoff in TypeScript: the reference that `backoff.lua.ts` mirrors. Each refusal in a row
 * (no request admitted in between) holds the client back for twice as long as the one before: the first
 * for the policies' own wait at that refusal (`base`), the next for 2 × base from then, then 4 × base, up
 * to 2^{@link MAX_DOUBLINGS} × base. While held back every check is refused (and, being a refusal, doubles
 * the wait again); an admitted request ends the streak. @fastify/rate-limit's `exponentialBackoff`.
 *
 * State: `[refusals, untilMs, baseMs]`, kept after the key's policy states (and its ban's).
 */
import type { StateFields } from '../algorithm.js';

/** How many numbers the backoff's state takes. */
export const BACKOFF_FIELDS = 3;

/** The most times the wait is doubled: a streak never holds a client back more than 1024 × its base. */
export const MAX_DOUBLINGS = 10;

/** The backoff state at `b` of `st`; when nothing was `stored`, none. */
export function currentBackoff(st: StateFields, b: number, stored: boolean): void {
  if (!stored) {
    st[b] = 0;
    st[b + 1] = 0;
    st[b + 2] = 0;
  }
}

/** Until when the client is held back, in ms since the epoch; 0 or past when it is not. */
export function backoffUntil(st: StateFields, b: number): number {
  return st[b + 1] as number;
}

/**
 * After a refused check at `nowMs`: one more refusal in a row, and the client held back until
 * `base × 2^(refusals before)` from now. `waitMs` is the policies' wait now, the streak's base when it is
 * the first refusal.
 */
export function backedOff(st: StateFields, b: number, nowMs: number, waitMs: number): void {
  const refusals = st[b] as number;
  const baseMs = refusals === 0 ? waitMs : (st[b + 2] as number);
  st[b] = Math.min(refusals + 1, MAX_DOUBLINGS);
  st[b + 1] = Math.max(st[b + 1] as number, nowMs + baseMs * 2 ** refusals);
  st[b + 2] = baseMs;
}

/** After an admitted check: the streak is over. */
export function admittedBackoff(st: StateFields, b: number): void {
  st[b] = 0;
  st[b + 1] = 0;
  st[b + 2] = 0;
}

/** Ms from `nowMs` until the backoff state says nothing more than a fresh one about admission. */
export function backoffIdleMs(st: StateFields, b: number, nowMs: number): number {
  return Math.max(0, (st[b + 1] as number) - nowMs);
}
