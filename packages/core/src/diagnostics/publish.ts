/**
 * Where limiters and stores publish their events. Each function looks at `hasSubscribers` first and
 * takes only what the caller already holds, so with nobody listening a check builds nothing, reads no
 * clock and hashes nothing.
 */
import type { Decision } from '../model/decision.js';
import type { BucketMode, Store } from '../model/store.js';
import {
  breakerCloseChannel,
  breakerOpenChannel,
  decisionChannel,
  denyCacheHitChannel,
  storeErrorChannel,
} from './channels.js';
import {
  breakerCloseEvent,
  breakerOpenEvent,
  decisionEvent,
  denyCacheHitEvent,
  storeErrorEvent,
  undecidedEvent,
} from './events.js';

/** What a limiter's events say of it. */
export class LimiterEvents {
  readonly #limiter: string;

  constructor(limiter: string) {
    this.#limiter = limiter;
  }

  /** The time a store call starts, when someone listens for how long it takes; `NaN` otherwise. */
  storeCallStarts(): number {
    return decisionChannel.hasSubscribers || storeErrorChannel.hasSubscribers
      ? performance.now()
      : Number.NaN;
  }

  /** Whether decisions are listened for: a caller that must compute something to publish one asks first. */
  get decisionsObserved(): boolean {
    return decisionChannel.hasSubscribers;
  }

  /** A decision of `consume`; `startedMs` from {@link storeCallStarts}, or `NaN` if the store was not asked. */
  decided(owner: string, decision: Decision, dryRun: boolean, startedMs: number): void {
    if (!decisionChannel.hasSubscribers) return;
    decisionChannel.publish(decisionEvent(this.#limiter, owner, decision, dryRun, sinceMs(startedMs)));
  }

  /** A check without a decision (see `undecidedEvent`). */
  undecided(
    outcome: 'skipped' | 'degraded',
    allowed: boolean,
    dryRun: boolean,
    cost: number | undefined,
    owner: string | undefined,
    startedMs: number,
  ): void {
    if (!decisionChannel.hasSubscribers) return;
    const event = undecidedEvent(this.#limiter, outcome, allowed, dryRun, cost, owner, sinceMs(startedMs));
    decisionChannel.publish(event);
  }

  /** A store call that failed; `startedMs` from {@link storeCallStarts}. */
  storeFailed(owner: string, operation: BucketMode, error: unknown, startedMs: number): void {
    if (!storeErrorChannel.hasSubscribers) return;
    const event = storeErrorEvent(this.#limiter, owner, operation, error, sinceMs(startedMs));
    storeErrorChannel.publish(event);
  }

  /** A `consume` the deny cache answered. */
  denyCacheHit(owner: string, decision: Decision): void {
    if (!denyCacheHitChannel.hasSubscribers) return;
    denyCacheHitChannel.publish(denyCacheHitEvent(this.#limiter, owner, decision));
  }
}

/** A `RedisStore`'s breaker opened. */
export function publishBreakerOpen(store: Store, prefix: string, reason: string): void {
  if (breakerOpenChannel.hasSubscribers) breakerOpenChannel.publish(breakerOpenEvent(store, prefix, reason));
}

/** A `RedisStore`'s breaker closed. */
export function publishBreakerClose(
  store: Store,
  prefix: string,
  downForMs: number,
  fallbacks: number,
): void {
  if (!breakerCloseChannel.hasSubscribers) return;
  breakerCloseChannel.publish(breakerCloseEvent(store, prefix, downForMs, fallbacks));
}

/** Milliseconds since `startedMs`; `undefined` when there was no start (`NaN`). */
function sinceMs(startedMs: number): number | undefined {
  return Number.isNaN(startedMs) ? undefined : performance.now() - startedMs;
}
