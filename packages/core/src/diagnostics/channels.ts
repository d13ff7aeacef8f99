/**
 * What Tollgate publishes through `node:diagnostics_channel`: the channel names, the event payloads, and
 * a typed way to subscribe. Publishing costs nothing while nobody subscribes: every publisher checks
 * `hasSubscribers` before it builds an event.
 */
import { type Channel, channel, subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Decision } from '../model/decision.js';
import type { BucketMode, Store } from '../model/store.js';

/** Every decision of a check: one per `consume` of a core limiter, one per request of an HTTP limiter. */
export const DECISION_CHANNEL = 'tollgate:decision';
/** A store call that failed (threw, timed out, or was refused by an open breaker). */
export const STORE_ERROR_CHANNEL = 'tollgate:store-error';
/** A `consume` answered by the deny cache, without asking the store. */
export const DENY_CACHE_HIT_CHANNEL = 'tollgate:deny-cache-hit';
/** A `RedisStore`'s circuit breaker opened: an incident began (once per incident). */
export const BREAKER_OPEN_CHANNEL = 'tollgate:breaker-open';
/** A `RedisStore`'s circuit breaker closed again: Redis answers, the incident is over. */
export const BREAKER_CLOSE_CHANNEL = 'tollgate:breaker-close';

/**
 * What became of a check:
 * - `'allowed'`: the store (or a `limit: 0` limiter) let it through;
 * - `'limited'`: refused (429, or 403 when its cost exceeds a capacity), by the store or the deny cache;
 * - `'dry-run-limited'`: it would have been refused, and went on because the limiter is in dry run;
 * - `'skipped'`: not checked (`skip`, `allowList`);
 * - `'degraded'`: the store failed and the fallback decided: the insurance limiter (`allowed` says
 *   what it answered), or an HTTP limiter's `onStoreError: 'allow'` / `'deny'`.
 */
export type DecisionOutcome = 'allowed' | 'limited' | 'dry-run-limited' | 'skipped' | 'degraded';

/** The payload of {@link DECISION_CHANNEL}. */
export interface DecisionEvent {
  /** The limiter's name: its namespace in the store (`''` for a core limiter without one). */
  readonly limiter: string;
  /** The policy that decided (`decision.decidedBy.policy`); `undefined` when there was no decision. */
  readonly policy: string | undefined;
  readonly outcome: DecisionOutcome;
  /** The decision's verdict (in dry run, what it would have been); `true` for a skipped check. */
  readonly allowed: boolean;
  /** The check ran in dry run: the request went on whatever `allowed` says. */
  readonly dryRun: boolean;
  /**
   * The decision admitted the request near the limit (`decision.nearLimit`: a policy's `nearLimit`
   * reached). Its own field, not an outcome: a near-limit request is still `'allowed'` (or `'degraded'`),
   * so counts by outcome stay as they were. `false` when there was no decision.
   */
  readonly nearLimit: boolean;
  /** The tokens asked for; `undefined` for a skipped check. */
  readonly cost: number | undefined;
  /** Whole tokens left in the deciding policy's bucket; `undefined` when there was no decision. */
  readonly remaining: number | undefined;
  /**
   * Milliseconds from the call to the store to its answer or failure, by this process's clock (time
   * spent waiting to be batched included); `undefined` when the store was not asked (deny cache,
   * `limit: 0`, skipped).
   */
  readonly storeLatencyMs: number | undefined;
  /**
   * SHA-256 (hex) of the bucket owner (`<limiter>/<identity>`), computed when first read; `undefined`
   * for a skipped check. Never the key itself. Pseudonymous, not anonymous: an IP's hash can be found by
   * hashing every IP.
   */
  readonly keyHash: string | undefined;
  /** The decision, with every policy's state; `undefined` when there was none (skipped, `'allow'`/`'deny'`). */
  readonly decision: Decision | undefined;
}

/** The payload of {@link STORE_ERROR_CHANNEL}. */
export interface StoreErrorEvent {
  /** The limiter's name (`''` for a core limiter without a namespace). */
  readonly limiter: string;
  /** What the limiter asked the store to do. */
  readonly operation: BucketMode;
  /** The error's `name`: `'StoreUnavailableError'` (down, silent, breaker open), `'ReplyError'`, … */
  readonly errorType: string;
  /**
   * The error's message, as the warning logs print it. The error object itself is not published: a
   * Redis client's error may carry the command, and with it the raw key.
   */
  readonly message: string;
  /**
   * Milliseconds from the call to the store to its failure; `undefined` only when the first subscriber
   * came while the call was under way.
   */
  readonly storeLatencyMs: number | undefined;
  /** SHA-256 (hex) of the bucket owner, as in {@link DecisionEvent.keyHash}. */
  readonly keyHash: string;
}

/** The payload of {@link DENY_CACHE_HIT_CHANNEL}. */
export interface DenyCacheHitEvent {
  /** The limiter's name. */
  readonly limiter: string;
  /** The policy that makes the client wait longest. */
  readonly policy: string;
  /** The tokens asked for. */
  readonly cost: number;
  /** Milliseconds until the request would fit. */
  readonly retryAfterMs: number | undefined;
  /** SHA-256 (hex) of the bucket owner, as in {@link DecisionEvent.keyHash}. */
  readonly keyHash: string;
}

/** The payload of {@link BREAKER_OPEN_CHANNEL}. */
export interface BreakerOpenEvent {
  /** The store whose breaker opened. */
  readonly store: Store;
  /** The store's key prefix, to tell stores apart in metrics. */
  readonly prefix: string;
  /** Why: the failure that opened it. */
  readonly reason: string;
}

/** The payload of {@link BREAKER_CLOSE_CHANNEL}. */
export interface BreakerCloseEvent {
  /** The store whose breaker closed. */
  readonly store: Store;
  /** The store's key prefix. */
  readonly prefix: string;
  /** How long the incident lasted, in ms. */
  readonly downForMs: number;
  /** Checks the open breaker refused meanwhile (each took its limiter's fallback). */
  readonly fallbacks: number;
}

/** Each channel's name and its payload. */
export interface TollgateEvents {
  [DECISION_CHANNEL]: DecisionEvent;
  [STORE_ERROR_CHANNEL]: StoreErrorEvent;
  [DENY_CACHE_HIT_CHANNEL]: DenyCacheHitEvent;
  [BREAKER_OPEN_CHANNEL]: BreakerOpenEvent;
  [BREAKER_CLOSE_CHANNEL]: BreakerCloseEvent;
}

/** The name of one of Tollgate's channels. */
export type TollgateChannel = keyof TollgateEvents;

/**
 * Subscribes to one of Tollgate's channels, with the payload typed; returns the unsubscribe function.
 * The same as `diagnostics_channel.subscribe(name, listener)`. A listener runs inside the check that
 * published, so keep it quick, and never let it throw (Node reports a listener's error as an
 * uncaught exception).
 *
 * @example
 * const stop = subscribeTollgate(DECISION_CHANNEL, (event) => {
 *   if (event.outcome === 'dry-run-limited') wouldRefuse.add(1, { limiter: event.limiter });
 * });
 */
export function subscribeTollgate<Name extends TollgateChannel>(
  name: Name,
  listener: (event: TollgateEvents[Name]) => void,
): () => void {
  const onMessage = listener as (message: unknown, name: string | symbol) => void;
  subscribe(name, onMessage);
  return () => {
    unsubscribe(name, onMessage);
  };
}

/** The channels, made once: module-level references keep them (and their subscribers) alive. */
export const decisionChannel: Channel = channel(DECISION_CHANNEL);
export const storeErrorChannel: Channel = channel(STORE_ERROR_CHANNEL);
export const denyCacheHitChannel: Channel = channel(DENY_CACHE_HIT_CHANNEL);
export const breakerOpenChannel: Channel = channel(BREAKER_OPEN_CHANNEL);
export const breakerCloseChannel: Channel = channel(BREAKER_CLOSE_CHANNEL);
