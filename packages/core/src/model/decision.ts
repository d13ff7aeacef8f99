/** Decisions, the types: what a limiter answers, for every policy of a request. */
import type { AlgorithmName } from './policy.js';

/** One policy's part of a {@link Decision}. */
export interface PolicyDecision {
  /** The policy's name. */
  readonly policy: string;
  /** How the policy counts. */
  readonly algorithm: AlgorithmName;
  /** Tokens per window. */
  readonly limit: number;
  /** The window in milliseconds. */
  readonly windowMs: number;
  /** The most tokens available at once: `burst` (token bucket), else `limit`. */
  readonly capacity: number;
  /** Whole tokens left after this decision (floored). */
  readonly remaining: number;
  /** Milliseconds until all of `capacity` is available again; 0 when it is. */
  readonly resetMs: number;
  /**
   * Milliseconds until `remaining` grows by one whole token: for a token bucket, the next token (for a
   * full one, the time a spent token takes to come back); for a fixed window, the window's end; for a
   * sliding window, until the previous window's weight has fallen by a token.
   */
  readonly nextTokenMs: number;
  /**
   * Milliseconds until `cost` fits: 0 when it does now, `undefined` when it never will (`cost` exceeds
   * the capacity).
   */
  readonly retryAfterMs: number | undefined;
  /**
   * `true` when the request was admitted and this policy's tokens used, the request's own included,
   * reached its `nearLimit` fraction of the capacity; always `false` for a policy without `nearLimit`
   * and in a refused decision.
   */
  readonly nearLimit: boolean;
}

/**
 * Why a decision came out as it did: `'allowed'`; `'limited'` (wait `retryAfterMs`, which is `undefined`
 * only for the HTTP layer's `limit: 0`, where no wait will do); `'cost-exceeds-capacity'` (the cost is
 * more than some bucket can ever hold: no wait will do); `'banned'` (the client was refused `ban.after`
 * times in a row and is refused outright until its ban ends, in `retryAfterMs`); or `'too-many-open'` (a
 * `reserve` with an id, refused uncharged: the key holds the limiter's `maxOpen` open reservations; in
 * `retryAfterMs`, the oldest of them ends, unless one is settled first).
 */
export type DecisionReason = 'allowed' | 'limited' | 'cost-exceeds-capacity' | 'banned' | 'too-many-open';

/** The answer to `consume` or `peek`. */
export interface Decision {
  /** Whether the request may go ahead (for `consume`: it was charged to every policy). */
  readonly allowed: boolean;
  /** See {@link DecisionReason}. */
  readonly reason: DecisionReason;
  /** The tokens asked for. */
  readonly cost: number;
  /**
   * When denied, ms until every policy holds `cost` tokens (the basis of `Retry-After`); 0 when allowed;
   * `undefined` when no wait will do.
   */
  readonly retryAfterMs: number | undefined;
  /**
   * The policy that decided: when denied, the one that makes the client wait longest; when allowed, the
   * one with the fewest tokens left.
   */
  readonly decidedBy: PolicyDecision;
  /** Every policy's state, in the limiter's policy order. */
  readonly policies: readonly PolicyDecision[];
  /** When the store decided, by the store's clock (the Redis server's for `RedisStore`), in ms since the epoch. */
  readonly decidedAtMs: number;
  /**
   * `true` when the store could not answer and the limiter's per-process insurance limiter decided
   * instead: the numbers are this process's, not the shared ones.
   */
  readonly degraded: boolean;
  /**
   * `true` when the request was admitted and some policy is near its limit (see
   * {@link PolicyDecision.nearLimit}); a refused request is never near.
   */
  readonly nearLimit: boolean;
  /**
   * For a `consume` given `maxWait` and admitted by the store: ms from `decidedAtMs` until the caller's
   * turn, which the call waited for before it resolved (0: the tokens were there). Absent otherwise.
   */
  readonly waitedMs?: number;
}
