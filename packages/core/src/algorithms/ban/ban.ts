/**
 * Bans in TypeScript: the reference that `ban.lua.ts` mirrors. A client refused `after` times in a row
 * (no request admitted in between) is refused outright for `durationMs`, whatever its policies would
 * say: rate-limiter-flexible's `blockDuration`, @fastify/rate-limit's `ban`.
 *
 * State: `[refusals, bannedUntilMs]`, kept beside the key's policy states.
 */

/** A limiter's ban rule, resolved. */
export interface BanRule {
  /** Refusals in a row that start a ban. */
  readonly after: number;
  /** How long a ban lasts, in ms. */
  readonly durationMs: number;
}

/** `[refusals, bannedUntilMs]`. */
export type BanState = [number, number];

/** The ban state at `nowMs`: a ban that has run out is over, and its count starts again. */
export function currentBan(stored: readonly number[] | undefined, nowMs: number): BanState {
  const [refusals = 0, untilMs = 0] = stored ?? [];
  return untilMs > 0 && untilMs <= nowMs ? [0, 0] : [refusals, untilMs];
}

/** Whether the client is banned at `nowMs`. */
export function isBanned([, untilMs]: BanState, nowMs: number): boolean {
  return untilMs > nowMs;
}

/** After a refused check: one more refusal, and a ban once there are `after` in a row. */
export function refused(rule: BanRule, [refusals]: BanState, nowMs: number): BanState {
  return refusals + 1 >= rule.after ? [0, nowMs + rule.durationMs] : [refusals + 1, 0];
}

/** After an admitted check: the count starts again. */
export function admitted(): BanState {
  return [0, 0];
}

/** Ms from `nowMs` until the ban state says nothing: the ban's end, or now when there is none. */
export function banIdleMs([, untilMs]: BanState, nowMs: number): number {
  return Math.max(0, untilMs - nowMs);
}
