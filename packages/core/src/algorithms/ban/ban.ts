/**
 * Bans in TypeScript: the reference that `ban.lua.ts` mirrors. A client refused `after` times in a row
 * (no request admitted in between) is refused outright for `durationMs`, whatever its policies would
 * say: rate-limiter-flexible's `blockDuration`, @fastify/rate-limit's `ban`.
 *
 * State: `[refusals, bannedUntilMs]`, kept after the key's policy states.
 */
import type { BanRule } from '../../model/ban.js';
import type { StateFields } from '../algorithm.js';

/**
 * The ban state at `o` of `st` brought to `nowMs` in place: a ban that has run out is over, and its count
 * starts again; when nothing was `stored`, none.
 */
export function currentBan(st: StateFields, o: number, stored: boolean, nowMs: number): void {
  const untilMs = st[o + 1] as number;
  if (!stored || (untilMs > 0 && untilMs <= nowMs)) {
    st[o] = 0;
    st[o + 1] = 0;
  }
}

/** When the ban at `o` ends, in ms since the epoch; 0 when there is none. */
export function bannedUntil(st: StateFields, o: number): number {
  return st[o + 1] as number;
}

/** After a refused check: one more refusal, and a ban once there are `after` in a row. */
export function refused(rule: BanRule, st: StateFields, o: number, nowMs: number): void {
  const refusals = (st[o] as number) + 1;
  st[o] = refusals >= rule.after ? 0 : refusals;
  st[o + 1] = refusals >= rule.after ? nowMs + rule.durationMs : 0;
}

/** After an admitted check: the count starts again. */
export function admitted(st: StateFields, o: number): void {
  st[o] = 0;
  st[o + 1] = 0;
}

/** Ms from `nowMs` until the ban state says nothing: the ban's end, or now when there is none. */
export function banIdleMs(st: StateFields, o: number, nowMs: number): number {
  return Math.max(0, (st[o + 1] as number) - nowMs);
}
