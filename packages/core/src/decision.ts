/** Decisions: what a limiter answers, derived from bucket levels by one function for every store. */
import type { ResolvedPolicy } from './policy.js';
import type { BucketResult } from './store.js';

/** One policy's part of a {@link Decision}. */
export interface PolicyDecision {
  /** The policy's name. */
  readonly policy: string;
  /** Tokens refilled per window. */
  readonly limit: number;
  /** The window in milliseconds. */
  readonly windowMs: number;
  /** Bucket capacity in tokens (`burst`, else `limit`). */
  readonly capacity: number;
  /** Whole tokens left after this decision (floored). */
  readonly remaining: number;
  /** Milliseconds until the bucket is full again; 0 when it is full. */
  readonly resetMs: number;
  /**
   * Milliseconds until `remaining` grows by one whole token. For a full bucket, the time one token takes
   * to refill: a token spent now is back after that long.
   */
  readonly nextTokenMs: number;
  /**
   * Milliseconds until this bucket holds `cost` tokens: 0 when it does now, `undefined` when it never
   * will (`cost` exceeds its capacity).
   */
  readonly retryAfterMs: number | undefined;
}

/**
 * Why a decision came out as it did: `'allowed'`; `'limited'` (wait `retryAfterMs`, which is `undefined`
 * only for the HTTP layer's `limit: 0`, where no wait will do); or `'cost-exceeds-capacity'` (the cost is
 * more than some bucket can ever hold: no wait will do).
 */
export type DecisionReason = 'allowed' | 'limited' | 'cost-exceeds-capacity';

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
}

/** Builds the {@link Decision} for a store's answer. */
export function decide(policies: readonly ResolvedPolicy[], result: BucketResult, cost: number): Decision {
  const { applied, levelUnits, nowMs } = result;
  const states = policies.map((policy, i) => describePolicy(policy, levelUnits[i] as number, cost));
  const overCapacity = states.some((state) => state.retryAfterMs === undefined);
  const allowed = applied && !overCapacity;
  const decidedBy = allowed ? fewestRemaining(states) : longestWait(states);
  return {
    allowed,
    reason: allowed ? 'allowed' : overCapacity ? 'cost-exceeds-capacity' : 'limited',
    cost,
    retryAfterMs: allowed ? 0 : decidedBy.retryAfterMs,
    decidedBy,
    policies: states,
    decidedAtMs: nowMs,
    degraded: false,
  };
}

function describePolicy(policy: ResolvedPolicy, levelUnits: number, cost: number): PolicyDecision {
  const { name, limit, windowMs, capacity, capacityUnits } = policy;
  const costUnits = cost * windowMs;
  const remaining = Math.floor(levelUnits / windowMs);
  return {
    policy: name,
    limit,
    windowMs,
    capacity,
    remaining,
    resetMs: Math.ceil((capacityUnits - levelUnits) / limit),
    nextTokenMs: Math.ceil(((remaining + 1) * windowMs - levelUnits) / limit),
    retryAfterMs:
      costUnits > capacityUnits ? undefined : Math.max(0, Math.ceil((costUnits - levelUnits) / limit)),
  };
}

function fewestRemaining(states: readonly PolicyDecision[]): PolicyDecision {
  return states.reduce((best, s) =>
    s.remaining < best.remaining || (s.remaining === best.remaining && s.resetMs > best.resetMs) ? s : best,
  );
}

function longestWait(states: readonly PolicyDecision[]): PolicyDecision {
  const waitOf = (s: PolicyDecision) => s.retryAfterMs ?? Number.POSITIVE_INFINITY;
  return states.reduce((worst, s) => (waitOf(s) > waitOf(worst) ? s : worst));
}
