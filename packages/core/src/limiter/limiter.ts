/** `createLimiter`: policies and a store put together behind consume / peek / refund / reset. */

import { decide } from '../algorithms/decide.js';
import { turnMs } from '../algorithms/settle.js';
import { LimiterEvents } from '../diagnostics/publish.js';
import type { Decision } from '../model/decision.js';
import type { ResolvedPolicy } from '../model/policy.js';
import type {
  BucketMode,
  BucketRequest,
  BucketResult,
  ReservationRequest,
  ReservationResult,
  Store,
} from '../model/store.js';
import { TollgateArgumentError } from '../support/argument-error.js';
import { DeadlineWatch } from '../support/deadline-watch.js';
import type { Duration } from '../support/duration.js';
import { fromSource, TollgateOptionError } from '../support/option-error.js';
import { ownField } from '../support/value-checks.js';
import { bucketOwner } from './bucket-key.js';
import {
  CONSUME_OPTIONS,
  checkCallOptions,
  PEEK_OPTIONS,
  REFUND_OPTIONS,
  RESERVE_OPTIONS,
  SCHEDULE_OPTIONS,
} from './call-options.js';
import { DenyCache, insuranceFor } from './in-process.js';
import {
  type LimiterConfig,
  type LimiterOptions,
  limiterConfig,
  type OnStoreError,
  onStoreErrorOption,
  type StoreErrorAction,
} from './limiter-options.js';
import {
  type LimitOverride,
  type Override,
  type OverrideOptions,
  overrideOf,
  overrideTtlMs,
  resolveOverride,
} from './overrides.js';
import { maxExtraTokensOf, type Reservation, reservationById, reservationOf } from './reservation.js';
import { actualCostOf, reservationIdOf, reservationTtlMsOf, type SettleResult } from './reservation-ids.js';
import { slicedChecks } from './token-slices.js';
import { TurnRefusedError } from './turn-refused-error.js';
import {
  DEFAULT_SCHEDULE_WAIT,
  maxWaitMsOf,
  signalOf,
  sleepUnlessAborted,
  Waiters,
  whyNoWait,
} from './waits.js';

/** Options of a single check. Any other option is refused with a `TypeError`. */
export interface ConsumeOptions {
  /** Tokens this request costs: any positive number. Default: `1`. */
  cost?: number;
  /** This check's answer to a store failure, instead of the limiter's `onStoreError`. */
  onStoreError?: OnStoreError;
  /**
   * The caller lets the request go whatever the decision says (shadow mode). The check is decided and
   * charged exactly as without it, and the decision is the same; only its event says so: a refusal is
   * published on `tollgate:decision` as `'dry-run-limited'` instead of `'limited'`. Default: `false`.
   */
  dryRun?: boolean;
  /**
   * How long the caller will wait for its turn: ms or a string such as `'5s'`, at most 2^31 − 1 ms. If
   * the tokens are there, the call is admitted at once; if every policy will have them within `maxWait`,
   * the store hands out a turn in the same atomic step (charging into the bucket's debt) and the call
   * resolves, admitted, when it comes (`decision.waitedMs` says how long that was); else it is refused
   * at once, `retryAfterMs` saying the wait it would have needed. Waiters on one key, in every process,
   * are served in the order the store saw them, and the rate admitted never exceeds the policies'.
   * Needs token-bucket policies without slices (else the call rejects with a `TollgateArgumentError`). When the
   * store fails, the insurance limiter decides at once, without waiting. Past the limiter's
   * `maxWaiters`, the call does not wait. Default: `0` (no wait).
   *
   * @example
   * const decision = await limiter.consume('partner-api', { maxWait: '10s', signal: request.signal });
   */
  maxWait?: Duration;
  /**
   * Aborts the call: before it is decided, or while it waits for its turn. The turn is given back (its
   * charge less what has refilled since the decision, as a refund with `chargedAtMs` gives it) and the
   * call rejects with the signal's reason. An abort after the call resolved changes nothing. Default:
   * none.
   */
  signal?: AbortSignal | undefined;
}

/**
 * Options of {@link Limiter.schedule}: those of a check but `dryRun` (the function runs only at its
 * turn), with a `maxWait` of its own by default.
 */
export interface ScheduleOptions {
  /** Tokens the call costs: any positive number. Default: `1`. */
  cost?: number;
  /** How long the call may wait for its turn (see {@link ConsumeOptions.maxWait}). Default: `'30s'`. */
  maxWait?: Duration;
  /** Aborts the wait; the turn is given back and the call rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  /** This call's answer to a store failure, instead of the limiter's `onStoreError`. */
  onStoreError?: OnStoreError;
}

/** Options of {@link Limiter.reserve}: those of a check, but for the cost, which `reserve` is given. */
export type ReserveOptions = Omit<ConsumeOptions, 'cost'> & {
  /**
   * Makes a reservation by id, which any process may settle or cancel (`limiter.settle(key, id, …)`),
   * once however often it is asked: your own id (1 to 200 characters, unique per key: a job id, say),
   * or `true` for one made for you (128 random bits, base64url), in `reservation.id`. The store keeps
   * it, beside the key's buckets, until it is settled or its `ttl` ends; at most the limiter's
   * `maxOpen` at once per key. An id already used on the key (open, or settled within its `ttl`) is
   * refused with a `TollgateArgumentError`. Needs a store that keeps them (`MemoryStore`, `RedisStore`)
   * and a policy without slices. Default: none (the reservation is settled in this process only).
   */
  id?: string | true;
  /**
   * With `id`: how long the reservation stays open if no settle comes, ms or a string such as `'15m'`,
   * at most 30 days. It then stays charged what was reserved, and is forgotten (a late settle finds it
   * `'unknown'`). Default: `'1h'`.
   */
  ttl?: Duration;
};

/** Options of a refund. */
export interface RefundOptions {
  /**
   * The decision being undone was `degraded`: it was charged to the insurance limiter, so the tokens go
   * back there and the store is not touched. Default: `false` (they go back to the store).
   */
  degraded?: boolean;
  /**
   * When the tokens given back were charged: the decision's `decidedAtMs`. Then no bucket gets back more
   * than that charge still holds: a window that began after it gets nothing, a token bucket the cost
   * less what it has refilled since. So a refund that comes late (a request that ran across a window's
   * end) never adds to the next window. Default: none (the whole cost, as `reward` gives it).
   *
   * @example
   * await limiter.refund(key, decision.cost, { degraded: decision.degraded, chargedAtMs: decision.decidedAtMs });
   */
  chargedAtMs?: number;
}

/** A rate limiter. Every method is atomic across all of its policies. */
export interface Limiter {
  /** The policies, validated and resolved. */
  readonly policies: readonly ResolvedPolicy[];
  /**
   * The policies of the insurance limiter, which decides when the store fails (`decision.degraded`):
   * the same, with each limit and burst divided by `insurance.instances`.
   */
  readonly insurancePolicies: readonly ResolvedPolicy[];
  /**
   * Charges `cost` to every policy if all have it (then `allowed`), else charges nothing. With
   * `maxWait`, a cost that does not fit now may wait for a turn (see {@link ConsumeOptions.maxWait}).
   */
  consume(key: string, options?: ConsumeOptions): Promise<Decision>;
  /** Answers as `consume` would, charging nothing. */
  peek(key: string, options?: ConsumeOptions): Promise<Decision>;
  /**
   * Runs `fn` at its turn and resolves with what it returns: a `consume` with `maxWait` (default 30 s),
   * then the call. For outbound calls at a partner's limit from a whole fleet (what bottleneck's
   * `schedule` does in one process): every process's calls on one key share the limit, in the order the
   * store handed out their turns. Rejects with a `TurnRefusedError` (and runs nothing) when no turn comes
   * within `maxWait`, and with the signal's reason when aborted first (the turn given back). Needs
   * token-bucket policies, as `maxWait` does.
   *
   * @example
   * const orders = await limiter.schedule('partner-api', () => fetch(url).then((r) => r.json()), { maxWait: '10s' });
   */
  schedule<T>(key: string, fn: () => T | PromiseLike<T>, options?: ScheduleOptions): Promise<T>;
  /**
   * Charges `cost` as `consume` does (to every policy, or to none) and returns a {@link Reservation},
   * to settle once the true cost is known: the difference is then charged (possibly into debt) or
   * given back, in one atomic store step.
   *
   * @example
   * const reservation = await limiter.reserve(`key:${apiKey}`, 1_000);
   * if (reservation.decision.allowed) await reservation.settle(usage.totalTokens);
   */
  reserve(key: string, cost: number, options?: ReserveOptions): Promise<Reservation>;
  /**
   * Settles the reservation made on `key` with `reserve`'s `id`, from any process: charges
   * `actualCost` less what was reserved (into debt if need be, as `penalty` does), or gives the
   * difference back (no more than the charge still holds: never into a later window), in one atomic
   * store step with marking it settled. Only the first settle or cancel of an id moves the charge; a
   * later one, or one for an id the store does not know, changes nothing and says why. Rejects when the
   * store fails (the reservation then stays open: settling again is safe).
   *
   * @example
   * const result = await limiter.settle(`key:${apiKey}`, job.reservationId, usage.totalTokens);
   * if (!result.settled) log.info(`already settled or unknown: ${result.reason}`);
   */
  settle(key: string, id: string, actualCost: number): Promise<SettleResult>;
  /** Gives back a reservation by id, from any process, as `settle(key, id, 0)` does. */
  cancel(key: string, id: string): Promise<SettleResult>;
  /**
   * Gives `cost` tokens back to every policy (never beyond capacity), e.g. when a request failed. Default
   * cost: 1. Give back where the charge was made: `{ degraded: true }` for a `degraded` decision; and no
   * more than the charge still holds: `{ chargedAtMs: decision.decidedAtMs }`.
   */
  refund(key: string, cost?: number, options?: RefundOptions): Promise<void>;
  /**
   * Charges `cost` tokens to every policy whether they have them or not: a client can owe, and waits
   * longer for it (rate-limiter-flexible's `penalty`), as long as that wait is a whole number of ms
   * (below 2^53) in every store: a token bucket owes no more. Default cost: 1. Returns what a request of
   * cost 1 would be answered after it.
   */
  penalty(key: string, cost?: number): Promise<Decision>;
  /** Gives `cost` tokens back, like `refund` (rate-limiter-flexible's `reward`). Default cost: 1. */
  reward(key: string, cost?: number): Promise<void>;
  /**
   * Refills every bucket of `key` at once, the insurance limiter's included, and forgets this process's
   * token slice of it (other processes spend what is left of theirs).
   */
  reset(key: string): Promise<void>;
  /**
   * Gives `key` other limits, in every process, from its next check: a number for a limiter of one policy,
   * or limits by policy name. Its buckets keep what the client has used, when the override begins and
   * when it ends: a window its count, a token bucket the tokens used (3 used of 3, then 97 left of 100),
   * refilling at the rate in force.
   * Checked first: a bad override throws a `TypeError` and nothing is stored. Needs `overrides: true`.
   * Rejects when the store fails.
   *
   * @example
   * await limiter.setOverride('key:acme', { limit: 1000, burst: 2000 }, { ttl: '1h' });
   */
  setOverride(key: string, override: LimitOverride, options?: OverrideOptions): Promise<void>;
  /** Gives `key` the policies' own limits again, in every process. Needs `overrides: true`. */
  removeOverride(key: string): Promise<void>;
  /** `key`'s override in force, as the store holds it; `undefined`: none. Needs `overrides: true`. */
  getOverride(key: string): Promise<Override | undefined>;
}

/**
 * Creates a limiter. Options are checked here, once: bad ones throw a `TollgateOptionError` (a
 * `TypeError`, code `TOLLGATE_INVALID_OPTION`) whose message starts with `createLimiter: ` and names the
 * field.
 *
 * @example
 * const limiter = createLimiter({
 *   store: new RedisStore({ client: redis }),
 *   policies: [{ limit: 10, window: '1s', name: 'burst' }, { limit: 1000, window: '1h', name: 'hourly' }],
 * });
 * const decision = await limiter.consume(`user:${userId}`);
 * if (!decision.allowed) console.log(`retry in ${decision.retryAfterMs} ms`);
 */
export function createLimiter(options: LimiterOptions): Limiter {
  let config: LimiterConfig;
  try {
    config = limiterConfig(options);
  } catch (error) {
    throw fromSource(error, 'createLimiter');
  }
  return limiterFrom(config);
}

/**
 * A limiter from its config, checked already (by {@link createLimiter}, or by an HTTP limiter for each of
 * its limits).
 */
export function limiterFrom(config: LimiterConfig): Limiter {
  const { policies, store, namespace, timeoutMs, onStoreError, ban, overrides, maxOpen, sleep } = config;
  const slice = policies[0]?.slice;
  const insurance = insuranceFor(policies, config.insurance, store.clock, ban);
  // Another process may raise a client's limit at any moment: a denial kept here could be stale. A
  // store in this process answers as fast as the cache would.
  const denyCache =
    overrides || config.denyCache === false || store.local === true
      ? undefined
      : new DenyCache(policies, config.denyCache.maxKeys, store.clock, ban !== undefined);
  // A store in this process may answer a check at once: no promise to wait for, no deadline to watch.
  const decideNow = denyCache === undefined ? store.decideNow?.bind(store) : undefined;
  // Stores that may hang and do not give up by themselves are given up on here.
  const watch = store.local === true || store.enforcesTimeout === true ? undefined : new DeadlineWatch();
  // With overrides, a client's capacities are the store's to know.
  const smallestCapacity = overrides
    ? Number.POSITIVE_INFINITY
    : Math.min(...policies.map((p) => p.capacity));
  const maxExtraTokens = maxExtraTokensOf(policies);
  const events = new LimiterEvents(namespace);
  const noWait = whyNoWait(policies);
  const waiters = new Waiters(config.maxWaiters);

  async function run(
    key: string,
    requestedCost: number | undefined,
    mode: BucketMode,
    fallback: OnStoreError,
    dryRunOption?: boolean,
    chargedAtMs?: number,
    maxWaitMs = 0,
  ): Promise<Decision> {
    const cost = costOf(requestedCost);
    const dryRun = dryRunOf(dryRunOption);
    const owner = bucketOwner(namespace, key);
    // A check that may wait neither reads nor fills the deny cache: a denial cached for a plain check
    // does not say whether a turn within maxWait is left.
    const isCheck = (mode === 'consume' || mode === 'peek') && maxWaitMs === 0;
    if (denyCache !== undefined && isCheck) {
      const cached = denyCache.check(owner, cost);
      if (cached !== undefined) {
        if (mode === 'consume') answeredInProcess(owner, cached, dryRun);
        return cached;
      }
    }
    // A cost some bucket can never hold is only looked at: charging the others would break all-or-none.
    const effectiveMode = mode === 'consume' && cost > smallestCapacity ? 'peek' : mode;
    const askedAtMs = denyCache?.now() ?? 0;
    const startedMs = events.storeCallStarts();
    let decision: Decision;
    try {
      const request = {
        key: owner,
        policies,
        cost,
        mode: effectiveMode,
        timeoutMs,
        ban,
        overrides,
        chargedAtMs,
        maxWaitMs,
      };
      if (decideNow !== undefined && maxWaitMs === 0) {
        decision = decideNow(request);
      } else {
        const result = await (watch === undefined || timeoutMs === undefined
          ? store.update(request)
          : watch.watch(store.update(request), timeoutMs));
        decision = decide(result.policies ?? policies, result, cost);
        if (maxWaitMs > 0 && decision.allowed) {
          decision = { ...decision, waitedMs: turnMs(result.policies ?? policies, result.states) };
        }
        if (denyCache !== undefined) {
          if (isCheck) denyCache.record(owner, result, decision, askedAtMs);
          else denyCache.forget(owner); // the levels moved outside a check: what was cached no longer holds
        }
      }
    } catch (error) {
      decision = await failedOver(owner, key, cost, mode, error, fallback, startedMs, false);
    }
    if (mode === 'consume') events.decided(owner, decision, dryRun, startedMs);
    return decision;
  }

  /** After a store failure: rethrows it, or lets the insurance limiter decide, as `fallback` says. */
  async function failedOver(
    owner: string,
    key: string,
    cost: number,
    mode: BucketMode,
    error: unknown,
    fallback: OnStoreError,
    startedMs: number,
    published: boolean,
  ): Promise<Decision> {
    if (isProgrammingError(error)) throw error;
    if (!published) events.storeFailed(owner, mode, error, startedMs);
    if ((await actionFor(fallback, error, key)) === 'throw') throw error;
    return insurance.decide(owner, cost, mode);
  }

  /** One store call, given up on after `timeoutMs` for a store that does not give up by itself. */
  function ask(request: BucketRequest): Promise<BucketResult> {
    const answer = store.update(request);
    return watch === undefined || timeoutMs === undefined ? answer : watch.watch(answer, timeoutMs);
  }

  const sliced =
    slice &&
    slicedChecks(slice, {
      policies,
      namespace,
      timeoutMs,
      clock: store.clock,
      events,
      denyCache,
      ask,
      run,
      failedOver,
    });

  /** `consume`, by the slices when the policy has them. */
  function check(
    key: string,
    cost: number | undefined,
    fallback: OnStoreError,
    dryRun: boolean | undefined,
  ): Promise<Decision> {
    // Not async itself: an unsliced check is `run`'s promise, with no second one wrapped around it.
    return sliced === undefined
      ? run(key, cost, 'consume', fallback, dryRun)
      : consumeSliced(sliced, key, cost, fallback, dryRun);
  }

  /** A sliced policy's `consume`; async so that a bad cost rejects, as `run`'s does. */
  async function consumeSliced(
    slices: NonNullable<typeof sliced>,
    key: string,
    cost: number | undefined,
    fallback: OnStoreError,
    dryRun: boolean | undefined,
  ): Promise<Decision> {
    return slices.consume(key, costOf(cost), fallback, dryRunOf(dryRun));
  }

  /**
   * Moves the charge `decision` made by `tokens` (a penalty when positive, a refund when negative, of no
   * more than the charge still holds) where it was made: the insurance limiter for a degraded decision,
   * else the store. Rejects when the store fails.
   */
  async function adjust(key: string, tokens: number, { degraded, decidedAtMs }: Decision): Promise<void> {
    const mode = tokens > 0 ? 'penalty' : 'refund';
    const chargedAtMs = tokens > 0 ? undefined : decidedAtMs;
    if (degraded) await insurance.decide(bucketOwner(namespace, key), Math.abs(tokens), mode, chargedAtMs);
    else await run(key, Math.abs(tokens), mode, 'throw', undefined, chargedAtMs);
  }

  /** One override operation on `key`; throws unless the limiter was made with `overrides: true`. */
  async function overrideOp(
    key: string,
    mode: 'set' | 'remove' | 'get',
    override?: readonly ResolvedPolicy[],
    ttlMs?: number,
  ): Promise<Override | undefined> {
    if (!overrides || store.override === undefined) {
      throw new TollgateOptionError(
        'setOverride, removeOverride and getOverride need createLimiter({ overrides: true })',
      );
    }
    const owner = bucketOwner(namespace, key);
    const request = { key: owner, policies, ban, mode, ttlMs, timeoutMs };
    const stored = await store.override(override === undefined ? request : { ...request, override });
    return overrideOf(stored);
  }

  /**
   * `consume` given `maxWait` or `signal`: the store hands out a turn (or refuses) in one step, then the
   * call sleeps until its turn; an abort gives the turn back and rejects with the signal's reason.
   */
  async function consumeWaiting(
    key: string,
    cost: number | undefined,
    fallback: OnStoreError,
    dryRun: boolean | undefined,
    maxWait: unknown,
    givenSignal: unknown,
  ): Promise<Decision> {
    const maxWaitMs = maxWaitMsOf(maxWait);
    const signal = signalOf(givenSignal);
    if (maxWaitMs > 0 && noWait !== undefined) throw new TollgateArgumentError(noWait);
    signal?.throwIfAborted();
    if (maxWaitMs === 0 || !waiters.enter()) {
      const decision = await check(key, cost, fallback, dryRun);
      return signal?.aborted ? givenBack(key, decision, signal) : decision;
    }
    try {
      const decision = await run(key, cost, 'consume', fallback, dryRun, undefined, maxWaitMs);
      const waitMs = decision.waitedMs ?? 0;
      if (signal?.aborted) return await givenBack(key, decision, signal);
      if (waitMs > 0) {
        try {
          await sleepUnlessAborted(waitMs, signal, sleep);
        } catch (reason) {
          return await givenBack(key, decision, signal as AbortSignal, reason);
        }
      }
      return decision;
    } finally {
      waiters.leave();
    }
  }

  /**
   * Gives back what an aborted call was charged, where it was charged, and rejects with the abort's
   * reason. Bounded as a refund with `chargedAtMs` is: each policy gets back its charge less what has
   * refilled since the decision. A whole charge could hand out again refill that other aborts ahead of
   * it had already freed for others (and a full bucket lost), so the rate would no longer be exact. A
   * failed refund leaves the turn taken.
   */
  async function givenBack(
    key: string,
    decision: Decision,
    signal: AbortSignal,
    reason: unknown = signal.reason,
  ): Promise<never> {
    if (decision.allowed) {
      const { cost, decidedAtMs } = decision;
      try {
        if (decision.degraded) {
          await insurance.decide(bucketOwner(namespace, key), cost, 'refund', decidedAtMs);
        } else {
          await run(key, cost, 'refund', 'throw', undefined, decidedAtMs);
        }
      } catch {
        // The caller asked to stop: its abort is the answer, whatever became of the refund.
      }
    }
    throw reason;
  }

  /** The store's reservations, for a reservation by id; throws when there are none to be had. */
  function reservationStore(): Required<Pick<Store, 'reservation'>> {
    if (store.reservation === undefined || sliced !== undefined) {
      throw new TollgateOptionError(
        'reservations by id need a store that keeps them (MemoryStore, RedisStore) and a policy without slices',
      );
    }
    return store as Required<Pick<Store, 'reservation'>>;
  }

  /** One reservation operation, given up on after `timeoutMs` for a store that does not give up by itself. */
  function askReservation(request: ReservationRequest): Promise<ReservationResult> {
    const answer = reservationStore().reservation(request);
    return watch === undefined || timeoutMs === undefined ? answer : watch.watch(answer, timeoutMs);
  }

  /**
   * `reserve` with an id: charged as `consume` charges, and recorded in the same store step; refused
   * without a charge past `maxOpen`. A store failure is taken as a check's is (`fallback`).
   */
  async function reserveById(
    key: string,
    cost: number,
    id: string,
    ttlMs: number,
    fallback: OnStoreError,
    dryRunOption: boolean | undefined,
  ): Promise<Decision> {
    reservationStore();
    // A cost some bucket can never hold is refused by a look, with nothing to record.
    if (cost > smallestCapacity) return run(key, cost, 'consume', fallback, dryRunOption);
    const dryRun = dryRunOf(dryRunOption);
    const owner = bucketOwner(namespace, key);
    const cached = denyCache?.check(owner, cost);
    if (cached !== undefined) {
      answeredInProcess(owner, cached, dryRun);
      return cached;
    }
    const askedAtMs = denyCache?.now() ?? 0;
    const startedMs = events.storeCallStarts();
    let decision: Decision;
    try {
      const request = { key: owner, policies, ban, overrides, timeoutMs, maxExtraTokens, maxOpen };
      const result = await askReservation({ ...request, mode: 'reserve', id, cost, ttlMs });
      if (result.outcome === 'duplicate') {
        throw new TollgateArgumentError(`reserve: the id ${JSON.stringify(id)} is already used on this key`);
      }
      const bucket = result.bucket as BucketResult;
      decision = decide(bucket.policies ?? policies, bucket, cost);
      if (result.outcome === 'too-many-open') {
        const retryAfterMs = Math.max(0, (result.detail ?? result.nowMs) - result.nowMs);
        decision = { ...decision, allowed: false, reason: 'too-many-open', retryAfterMs, nearLimit: false };
      } else {
        denyCache?.record(owner, bucket, decision, askedAtMs);
      }
    } catch (error) {
      decision = await failedOver(owner, key, cost, 'consume', error, fallback, startedMs, false);
    }
    events.decided(owner, decision, dryRun, startedMs);
    return decision;
  }

  /** `limiter.settle`: the reservation `id` of `key` settled at `actualCost`, once, wherever it is asked. */
  async function settleById(key: string, id: unknown, actualCost: unknown): Promise<SettleResult> {
    if (typeof id !== 'string' || id === '') {
      throw new TollgateArgumentError(`settle needs the reservation's id, a string; got ${String(id)}`);
    }
    const cost = actualCostOf(actualCost);
    const owner = bucketOwner(namespace, key);
    const request = { key: owner, policies, ban, overrides, timeoutMs, maxExtraTokens, maxOpen, ttlMs: 0 };
    const result = await askReservation({ ...request, mode: 'settle', id, cost });
    // The levels moved outside a check: a denial cached for the key no longer holds.
    if (result.outcome === 'settled') {
      denyCache?.forget(owner);
      return { settled: true, reservedCost: result.detail as number };
    }
    return { settled: false, reason: result.outcome === 'already-settled' ? 'settled' : 'unknown' };
  }

  function answeredInProcess(owner: string, decision: Decision, dryRun: boolean): void {
    events.denyCacheHit(owner, decision);
    events.decided(owner, decision, dryRun, Number.NaN);
  }

  return {
    policies,
    insurancePolicies: insurance.policies,
    consume(key, opts) {
      if (opts === undefined) return check(key, undefined, onStoreError, undefined);
      try {
        checkCallOptions(opts, CONSUME_OPTIONS, 'consume');
      } catch (error) {
        return Promise.reject(error); // a bad call rejects, as a bad cost does
      }
      if (readsOwnFieldsOnly(opts) && opts.maxWait === undefined && opts.signal === undefined) {
        return check(key, opts.cost, opts.onStoreError ?? onStoreError, opts.dryRun);
      }
      const maxWait = ownField(opts, 'maxWait');
      const signal = ownField(opts, 'signal');
      if (maxWait !== undefined || signal !== undefined) {
        return consumeWaiting(
          key,
          ownField(opts, 'cost'),
          ownField(opts, 'onStoreError') ?? onStoreError,
          ownField(opts, 'dryRun'),
          maxWait,
          signal,
        );
      }
      return check(
        key,
        ownField(opts, 'cost'),
        ownField(opts, 'onStoreError') ?? onStoreError,
        ownField(opts, 'dryRun'),
      );
    },
    async peek(key, opts) {
      checkCallOptions(opts, PEEK_OPTIONS, 'peek');
      const cost = ownField(opts, 'cost');
      // A slice that holds the cost answers as its `consume` would; peek never takes one.
      const local = sliced?.peek(key, costOf(cost));
      return local ?? run(key, cost, 'peek', ownField(opts, 'onStoreError') ?? onStoreError);
    },
    async schedule(key, fn, opts) {
      checkCallOptions(opts, SCHEDULE_OPTIONS, 'schedule');
      if (typeof fn !== 'function') {
        throw new TollgateArgumentError('schedule needs a function to run at its turn');
      }
      const decision = await consumeWaiting(
        key,
        ownField(opts, 'cost'),
        ownField(opts, 'onStoreError') ?? onStoreError,
        undefined,
        ownField(opts, 'maxWait') ?? DEFAULT_SCHEDULE_WAIT,
        ownField(opts, 'signal'),
      );
      if (!decision.allowed) throw new TurnRefusedError(decision);
      return fn();
    },
    async reserve(key, cost, opts) {
      checkCallOptions(opts, RESERVE_OPTIONS, 'reserve');
      const fallback = ownField(opts, 'onStoreError') ?? onStoreError;
      const givenId = ownField(opts, 'id');
      if (givenId !== undefined) {
        const id = reservationIdOf(givenId);
        const ttlMs = reservationTtlMsOf(ownField(opts, 'ttl'));
        const decision = await reserveById(
          key,
          reservedCostOf(cost),
          id,
          ttlMs,
          fallback,
          ownField(opts, 'dryRun'),
        );
        if (!decision.degraded) {
          return reservationById(decision, id, (actualCost) => settleById(key, id, actualCost));
        }
        // Charged in this process only, where the store cannot find it: settled here, as without an id.
        const local = reservationOf(decision, (tokens) => adjust(key, tokens, decision), maxExtraTokens);
        return { ...local, id };
      }
      if (ownField(opts, 'ttl') !== undefined) {
        throw new TollgateArgumentError("reserve's ttl is for a reservation by id: give it an id too");
      }
      const decision = await check(key, reservedCostOf(cost), fallback, ownField(opts, 'dryRun'));
      return reservationOf(decision, (tokens) => adjust(key, tokens, decision), maxExtraTokens);
    },
    settle: (key, id, actualCost) => settleById(key, id, actualCost),
    cancel: (key, id) => settleById(key, id, 0),
    async refund(key, cost, refundOptions) {
      checkCallOptions(refundOptions, REFUND_OPTIONS, 'refund');
      const chargedAtMs = chargedAtOf(ownField(refundOptions, 'chargedAtMs'));
      // A degraded decision was charged in this process only: giving it back to the store would hand
      // out tokens the store never took.
      if (ownField(refundOptions, 'degraded') === true) {
        await insurance.decide(bucketOwner(namespace, key), costOf(cost), 'refund', chargedAtMs);
        return;
      }
      await run(key, cost, 'refund', 'throw', undefined, chargedAtMs);
    },
    async penalty(key, cost) {
      await run(key, cost, 'penalty', 'throw');
      return run(key, 1, 'peek', 'throw'); // what the client's next request would get
    },
    async reward(key, cost) {
      await run(key, cost, 'refund', 'throw');
    },
    async reset(key) {
      const owner = bucketOwner(namespace, key);
      denyCache?.forget(owner);
      sliced?.drop(owner);
      await insurance.reset(owner);
      await store.reset(owner, policies, ban);
    },
    async setOverride(key, override, overrideOptions) {
      const resolved = resolveOverride(policies, override);
      await overrideOp(key, 'set', resolved, overrideTtlMs(overrideOptions));
    },
    async removeOverride(key) {
      await overrideOp(key, 'remove');
    },
    getOverride: (key) => overrideOp(key, 'get'),
  };
}

/**
 * Whether a plain read of a call option of `options` can find only an own field (or nothing), as
 * `ownField` would: an object whose prototype is `Object.prototype`, while `Object.prototype` holds none
 * of the options' names. Checked per call, so a pollution made at any time is seen. The engine answers
 * these from the objects' shapes, where `Object.hasOwn` is a call per field.
 */
function readsOwnFieldsOnly(options: unknown): boolean {
  return (
    typeof options === 'object' &&
    options !== null &&
    Object.getPrototypeOf(options) === Object.prototype &&
    !('cost' in Object.prototype) &&
    !('onStoreError' in Object.prototype) &&
    !('dryRun' in Object.prototype) &&
    !('maxWait' in Object.prototype) &&
    !('signal' in Object.prototype)
  );
}

/** Our own checks' errors (a bad key, cost or clock) are the caller's bugs, not a store failure. */
function isProgrammingError(error: unknown): boolean {
  return error instanceof TypeError || error instanceof RangeError;
}

async function actionFor(fallback: OnStoreError, error: unknown, key: string): Promise<StoreErrorAction> {
  if (typeof fallback !== 'function') return fallback;
  const action = await fallback(error, key);
  return onStoreErrorOption(action, 'the onStoreError function') as StoreErrorAction;
}

function dryRunOf(dryRun: boolean | undefined): boolean {
  if (dryRun === undefined || typeof dryRun === 'boolean') return dryRun === true;
  throw new TollgateArgumentError(`dryRun must be true or false; got ${String(dryRun)}`);
}

/** A refund's `chargedAtMs`, checked: ms since the epoch, or `undefined`. */
function chargedAtOf(chargedAtMs: unknown): number | undefined {
  if (chargedAtMs === undefined || Number.isFinite(chargedAtMs)) return chargedAtMs as number | undefined;
  throw new TollgateArgumentError(
    `refund's chargedAtMs must be ms since the epoch; got ${String(chargedAtMs)}`,
  );
}

/** `reserve`'s cost: required, unlike `consume`'s. */
function reservedCostOf(cost: number): number {
  if (cost === undefined)
    throw new TollgateArgumentError('reserve needs a cost: the tokens to charge before the work');
  return costOf(cost);
}

function costOf(cost: number | undefined): number {
  if (cost === undefined) return 1;
  if (typeof cost !== 'number' || !Number.isFinite(cost) || cost <= 0) {
    throw new TollgateArgumentError(`cost must be a positive finite number; got ${String(cost)}`);
  }
  return cost;
}
