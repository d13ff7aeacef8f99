/**
 * The event payloads, built from what a check already holds. Only called once a publisher has seen a
 * subscriber: an event nobody listens to is never built.
 */
import { createHash } from 'node:crypto';
import type { Decision } from '../model/decision.js';
import type { BucketMode, Store } from '../model/store.js';
import { reasonOf } from '../support/warnings.js';
import type {
  BreakerCloseEvent,
  BreakerOpenEvent,
  DecisionEvent,
  DecisionOutcome,
  DenyCacheHitEvent,
  StoreErrorEvent,
} from './channels.js';

/** The outcome of a decision: a degraded one is `'degraded'` whatever it answered. */
export function outcomeOf(decision: Decision, dryRun: boolean): DecisionOutcome {
  if (decision.degraded) return 'degraded';
  if (decision.allowed) return 'allowed';
  return dryRun ? 'dry-run-limited' : 'limited';
}

/** The SHA-256 of `owner`, computed on first read: most subscribers never read it. */
function lazyKeyHash(owner: string): () => string {
  let hash: string | undefined;
  return () => {
    hash ??= createHash('sha256').update(owner).digest('hex');
    return hash;
  };
}

/** A decision the limiter made, by the store, the deny cache, the insurance or `limit: 0`. */
export function decisionEvent(
  limiter: string,
  owner: string,
  decision: Decision,
  dryRun: boolean,
  storeLatencyMs: number | undefined,
): DecisionEvent {
  const keyHash = lazyKeyHash(owner);
  return {
    limiter,
    policy: decision.decidedBy.policy,
    outcome: outcomeOf(decision, dryRun),
    allowed: decision.allowed,
    dryRun,
    nearLimit: decision.nearLimit,
    cost: decision.cost,
    remaining: decision.decidedBy.remaining,
    storeLatencyMs,
    get keyHash() {
      return keyHash();
    },
    decision,
  };
}

/**
 * A check without a decision: skipped (`skip`, `allowList`), or given up on after a store failure that
 * an HTTP limiter answers with `'allow'` (`allowed: true`) or `'deny'`.
 */
export function undecidedEvent(
  limiter: string,
  outcome: 'skipped' | 'degraded',
  allowed: boolean,
  dryRun: boolean,
  cost: number | undefined,
  owner: string | undefined,
  storeLatencyMs: number | undefined,
): DecisionEvent {
  const keyHash = owner === undefined ? undefined : lazyKeyHash(owner);
  return {
    limiter,
    policy: undefined,
    outcome,
    allowed,
    dryRun,
    nearLimit: false,
    cost,
    remaining: undefined,
    storeLatencyMs,
    get keyHash() {
      return keyHash?.();
    },
    decision: undefined,
  };
}

/** A store call that failed. */
export function storeErrorEvent(
  limiter: string,
  owner: string,
  operation: BucketMode,
  error: unknown,
  storeLatencyMs: number | undefined,
): StoreErrorEvent {
  const keyHash = lazyKeyHash(owner);
  return {
    limiter,
    operation,
    errorType: error instanceof Error ? error.name : typeof error,
    message: reasonOf(error),
    storeLatencyMs,
    get keyHash() {
      return keyHash();
    },
  };
}

/** A denial the deny cache answered. */
export function denyCacheHitEvent(limiter: string, owner: string, decision: Decision): DenyCacheHitEvent {
  const keyHash = lazyKeyHash(owner);
  return {
    limiter,
    policy: decision.decidedBy.policy,
    cost: decision.cost,
    retryAfterMs: decision.retryAfterMs,
    get keyHash() {
      return keyHash();
    },
  };
}

/** A breaker that opened. */
export function breakerOpenEvent(store: Store, prefix: string, reason: string): BreakerOpenEvent {
  return { store, prefix, reason };
}

/** A breaker that closed. */
export function breakerCloseEvent(
  store: Store,
  prefix: string,
  downForMs: number,
  fallbacks: number,
): BreakerCloseEvent {
  return { store, prefix, downForMs, fallbacks };
}
