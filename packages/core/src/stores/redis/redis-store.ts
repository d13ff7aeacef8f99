/** Buckets and leases in Redis, shared by every app server: each check is decided by one atomic script. */

import { refillBoundMs } from '../../algorithms/policies.js';
import type { BanRule } from '../../model/ban.js';
import type { ResolvedPolicy } from '../../model/policy.js';
import type {
  BucketRequest,
  BucketResult,
  LeaseRequest,
  LeaseResult,
  OverrideRequest,
  OverrideResult,
  ReservationRequest,
  ReservationResult,
  Store,
} from '../../model/store.js';
import { TollgateArgumentError } from '../../support/argument-error.js';
import { DeadlineWatch } from '../../support/deadline-watch.js';
import { StoreUnavailableError } from '../../support/store-error.js';
import { TollgateError } from '../../support/tollgate-error.js';
import { Warnings } from '../../support/warnings.js';
import { policySetKey } from '../policy-set-key.js';
import type { CircuitBreaker } from './breaker.js';
import { clusterSlot } from './cluster-slot.js';
import type { RedisClientAdapter } from './redis-client.js';
import {
  checkedNow,
  checkedOwner,
  incidentBreaker,
  type RedisStoreOptions,
  resolveRedisStoreOptions,
} from './redis-store-options.js';
import {
  RESERVATION_SCRIPT,
  reservationArgs,
  reservationKeys,
  reservationReplyOf,
} from './script/reservation-wire.js';
import {
  answerStatus,
  bucketResultOf,
  EXPIRED,
  LEASE_SCRIPT,
  leaseArgs,
  leaseReplyOf,
  OVERRIDE_SCRIPT,
  overrideArgs,
  overrideLimitsArg,
  overrideReplyOf,
  REFUSED,
  refusalOf,
  type ScriptCheck,
  storedOverrideOf,
} from './script/wire.js';
import { type ScriptAnswer, ScriptBatcher } from './script-batcher.js';
import { ServerClockOffset } from './server-clock.js';
import {
  checkEvictionPolicy,
  checkQueueing,
  isAclRefusal,
  isScriptingUnavailable,
  KEYS_READ_ONE_BY_ONE,
  reportAclRefusal,
  reportScriptingUnavailable,
} from './setup-checks.js';

/** The most checks in one script call: about a millisecond of Redis's time. */
const MAX_BATCH = 200;

/**
 * Redis refused one check's key (WRONGTYPE, OOM): the other checks of its batch were decided. Named as
 * the client names a refused command, since that is what it stands for.
 */
class RefusedCheckError extends TollgateError {
  override readonly name = 'ReplyError';

  constructor(why: string) {
    super('TOLLGATE_STORE_REFUSED', why);
  }
}

/**
 * A store on Redis or Redis Cluster. Every `update` is one EVALSHA of an atomic script (EVAL only after
 * `NOSCRIPT`, when the server has lost its script cache); a key's buckets live in one string that
 * expires when they are all full again, under a hash tag, so a Cluster keeps them in one slot.
 *
 * It never queues: while the client is not connected, or its breaker is open, a check fails at once with
 * `StoreUnavailableError` (limiters then take their fallback). A check given up on after its timeout
 * carries a deadline on the server's clock, so if Redis runs it later it changes nothing. ioredis and
 * node-redis clients behave the same: each is seen through an adapter (`RedisClientAdapter`).
 *
 * @example
 * import { Redis } from 'ioredis';
 * const client = new Redis(process.env.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
 * client.on('error', (error) => log.warn(error));
 * const store = new RedisStore({ client });
 *
 * @example
 * import { createClient } from 'redis';
 * const client = createClient({ url: process.env.REDIS_URL, disableOfflineQueue: true });
 * client.on('error', (error) => log.warn(error));
 * await client.connect();
 * const store = new RedisStore({ client });
 */
export class RedisStore implements Store {
  /** {@inheritDoc Store.enforcesTimeout} */
  readonly enforcesTimeout = true;
  /** {@inheritDoc Store.clock} */
  readonly clock: (() => number) | undefined;
  readonly #client: RedisClientAdapter;
  readonly #prefix: string;
  readonly #warnings: Warnings;
  readonly #breaker: CircuitBreaker;
  readonly #watch = new DeadlineWatch();
  readonly #batcher: ScriptBatcher;
  readonly #offset = new ServerClockOffset();
  #serverChecked = false;
  #queueingChecked = false;
  #aclRefusalReported = false;
  #mgetRefusalReported = false;
  #noScriptingReported = false;

  constructor(options: RedisStoreOptions) {
    const { adapter, prefix, clock, logger, warnings, breaker } = resolveRedisStoreOptions(options);
    this.#client = adapter;
    this.#batcher = new ScriptBatcher({
      send: (script, keys, args, resent) =>
        adapter.runScript(script, keys, args, resent) as Promise<unknown[]>,
      groupOf: adapter.clustered ? clusterSlot : () => 0,
      deadlineArg: (sentAtMs, timeoutMs) => this.#deadline(sentAtMs, timeoutMs),
      watch: this.#watch,
      maxBatch: MAX_BATCH,
      keysReadOneByOne: (reason) => this.#keysReadOneByOne(reason),
    });
    this.#prefix = prefix;
    this.clock = clock;
    this.#warnings = new Warnings(logger, warnings);
    this.#breaker = incidentBreaker(breaker, this.#warnings, this, prefix);
    this.#queueingChecked = checkQueueing(adapter, this.#warnings);
  }

  /** {@inheritDoc Store.update} */
  async update(request: BucketRequest): Promise<BucketResult> {
    const { key, policies, cost, timeoutMs, ban, chargedAtMs, maxWaitMs = 0 } = request;
    const storeKey = this.#keyOf(key, policies, ban);
    const nowArg = this.clock === undefined ? '' : String(checkedNow(this.clock));
    const overrides = request.overrides === true;
    // A consume that may wait is sent as a 'wait', its most ms in the place of a refund's time.
    const waits = request.mode === 'consume' && maxWaitMs > 0;
    const mode: ScriptCheck['mode'] = waits ? 'wait' : request.mode;
    const sinceArg = waits ? String(maxWaitMs) : chargedAtMs === undefined ? '' : String(chargedAtMs);
    const check = { key: storeKey, policies, ban, overrides, nowArg, cost, mode, sinceArg, timeoutMs };
    const starting = this.#admit(timeoutMs);
    if (starting !== undefined) await starting;
    let scriptAnswer: ScriptAnswer;
    try {
      // The batcher gives up on the check itself, timing it from when it is really written.
      scriptAnswer = await this.#batcher.run(check);
    } catch (error) {
      throw this.#failure(error);
    }
    const { answers, at, nowMs, sentAtMs } = scriptAnswer;
    const status = answerStatus(answers, at);
    if (this.clock === undefined) {
      if (status === EXPIRED) this.#offset.forget(); // our bound was too early: the server's clock stepped
      this.#offset.sample(nowMs, sentAtMs);
    }
    if (status === EXPIRED || status === REFUSED) {
      const why = status === EXPIRED ? 'checks ran after their deadline' : refusalOf(answers, at);
      this.#breaker.failed(why, false);
      if (status === REFUSED) {
        this.#checkRefusal(why);
        throw new RefusedCheckError(why);
      }
      throw new StoreUnavailableError(`Redis ran the check after its ${timeoutMs} ms deadline`, {
        reported: !this.#breaker.closed,
      });
    }
    this.#breaker.succeeded();
    if (!this.#serverChecked) this.#checkServer();
    return bucketResultOf(check, answers, at, nowMs);
  }

  /** {@inheritDoc Store.override} */
  async override(request: OverrideRequest): Promise<OverrideResult | undefined> {
    const { key, policies, ban, mode, override, ttlMs, timeoutMs } = request;
    if (mode === 'set' && override === undefined)
      throw new TollgateArgumentError('an override to set needs its policies');
    const storeKey = this.#keyOf(key, policies, ban);
    const nowArg = this.clock === undefined ? '' : String(checkedNow(this.clock));
    const limits = override === undefined ? '' : overrideLimitsArg(override);
    const keepMs = refillBoundMs(override ?? policies);
    const args = overrideArgs(mode, nowArg, limits, ttlMs, keepMs, policies);
    // Written again after a NOSCRIPT, it is timed from then: it carries no deadline, so it is the same call.
    const send = (renewed?: () => boolean) =>
      this.#client.runScript(OVERRIDE_SCRIPT, [`${storeKey}:o`, storeKey], args, () => {
        renewed?.();
        return args;
      });
    const [nowMs, stored] = overrideReplyOf(await this.#call(timeoutMs, send, true));
    this.#breaker.succeeded();
    if (mode === 'set') {
      const policiesNow = override as readonly ResolvedPolicy[];
      return { policies: policiesNow, expiresAtMs: ttlMs === undefined ? undefined : nowMs + ttlMs };
    }
    const found = storedOverrideOf(policies, stored);
    // Redis expires it by its own clock; an injected clock (tests) may have passed its end first.
    if (found?.expiresAtMs !== undefined && found.expiresAtMs <= nowMs) return undefined;
    return found;
  }

  /**
   * {@inheritDoc Store.reservation}
   *
   * One EVALSHA of the reservation script per operation. A key's open reservations are a sorted set
   * and a hash beside its buckets (`<key>:r`, `<key>:rc`), its settled ones a sorted set (`<key>:rs`),
   * all under the buckets' hash tag, each expiring when its last record ends.
   */
  async reservation(request: ReservationRequest): Promise<ReservationResult> {
    const { key, policies, ban, mode, cost, timeoutMs } = request;
    const storeKey = this.#keyOf(key, policies, ban);
    const nowArg = this.clock === undefined ? '' : String(checkedNow(this.clock));
    const overrides = request.overrides === true;
    // A settle's check is a placeholder: the script puts in the tokens it moves, once it knows them.
    const check: ScriptCheck = {
      key: storeKey,
      policies,
      ban,
      overrides,
      nowArg,
      cost: mode === 'reserve' ? cost : 1,
      mode: mode === 'reserve' ? 'consume' : 'penalty',
      sinceArg: '',
      timeoutMs,
    };
    const own = { ...request, actualCost: mode === 'settle' ? cost : 0 };
    let sentAtMs = 0;
    const written = () => {
      sentAtMs = Date.now();
      return reservationArgs(own, check, this.#deadline(sentAtMs, timeoutMs));
    };
    const send = (renewed?: () => boolean) => {
      const args = written();
      return this.#client.runScript(RESERVATION_SCRIPT, reservationKeys(storeKey), args, () =>
        renewed?.() ? written() : args,
      );
    };
    const { outcome, open, detail, answers } = reservationReplyOf(await this.#call(timeoutMs, send, true));
    const nowMs = Number(answers[0]);
    if (this.clock === undefined) this.#offset.sample(nowMs, sentAtMs);
    const status = answers.length > 1 ? answerStatus(answers, 1) : 1;
    if (outcome === 'expired' || status === EXPIRED) {
      this.#breaker.failed('checks ran after their deadline', false);
      throw new StoreUnavailableError(`Redis ran the ${mode} after its ${timeoutMs} ms deadline`, {
        reported: !this.#breaker.closed,
      });
    }
    if (status === REFUSED) {
      const why = refusalOf(answers, 1);
      this.#breaker.failed(why, false);
      this.#checkRefusal(why);
      throw new RefusedCheckError(why);
    }
    this.#breaker.succeeded();
    const bucket = answers.length > 1 ? bucketResultOf(check, answers, 1, nowMs) : undefined;
    const result = { outcome, nowMs, open };
    if (outcome === 'settled' || outcome === 'too-many-open') {
      return bucket === undefined ? { ...result, detail } : { ...result, bucket, detail };
    }
    return bucket === undefined ? result : { ...result, bucket };
  }

  /** {@inheritDoc Store.lease} */
  async lease({ key, mode, leaseId, limit, ttlMs, timeoutMs }: LeaseRequest): Promise<LeaseResult> {
    const storeKey = `${this.#prefix}{${checkedOwner(key)}}:leases`;
    const nowArg = this.clock === undefined ? '' : String(checkedNow(this.clock));
    let sentAtMs = 0;
    const written = () => {
      sentAtMs = Date.now();
      const deadline = mode === 'acquire' ? this.#deadline(sentAtMs, timeoutMs) : '';
      return leaseArgs(nowArg, deadline, mode, leaseId, limit, ttlMs);
    };
    const send = (renewed?: () => boolean) => {
      const args = written();
      return this.#client.runScript(LEASE_SCRIPT, [storeKey], args, () => (renewed?.() ? written() : args));
    };
    const [status, nowMs, held] = leaseReplyOf(await this.#call(timeoutMs, send, true));
    if (this.clock === undefined) this.#offset.sample(nowMs, sentAtMs);
    if (status === EXPIRED) {
      this.#breaker.failed('checks ran after their deadline', false);
      throw new StoreUnavailableError(`Redis ran the acquire after its ${timeoutMs} ms deadline`, {
        reported: !this.#breaker.closed,
      });
    }
    this.#breaker.succeeded();
    return { applied: status === 1, held, nowMs };
  }

  /** {@inheritDoc Store.reset} */
  async reset(key: string, policies: readonly ResolvedPolicy[], ban?: BanRule): Promise<void> {
    const storeKey = this.#keyOf(key, policies, ban);
    await this.#call(undefined, () => this.#client.del(storeKey), false);
    this.#breaker.succeeded();
  }

  /**
   * Waits (up to `timeoutMs`) for the client's first connection: at startup nothing is lost yet, so a
   * check may wait for it rather than take the fallback. Once a connection has been lost, checks no
   * longer wait for the next one.
   */
  async #firstConnection(timeoutMs: number | undefined): Promise<void> {
    const ready = this.#client.firstReady();
    try {
      await (timeoutMs === undefined ? ready : this.#watch.watch(ready, timeoutMs));
    } catch (error) {
      this.#breaker.failed('it could not connect', true);
      throw new StoreUnavailableError((error as Error).message, { cause: error, reported: true });
    }
  }

  /**
   * Sends through the breaker (see {@link #admit}), gives up on the answer after `timeoutMs` if asked to
   * `watch` it, and records failures. A watched `send` is given `renewed` (see `DeadlineWatch.watchCall`),
   * for a call written again after a NOSCRIPT: it is then timed, and its deadline written, from then, unless
   * it was already given up on.
   */
  async #call(
    timeoutMs: number | undefined,
    send: (renewed?: () => boolean) => Promise<unknown>,
    watch: boolean,
  ): Promise<unknown> {
    const starting = this.#admit(timeoutMs);
    if (starting !== undefined) await starting;
    try {
      return !watch || timeoutMs === undefined ? await send() : await this.#watch.watchCall(send, timeoutMs);
    } catch (error) {
      throw this.#failure(error);
    }
  }

  /**
   * Throws `StoreUnavailableError` if the breaker does not let a call through. While the client makes
   * its first connection, returns a promise that waits for it (up to `timeoutMs`) first; else nothing,
   * so that a check on a healthy store takes no extra turn of the event loop.
   */
  #admit(timeoutMs: number | undefined): Promise<void> | undefined {
    if (this.#client.state() === 'starting') {
      return this.#firstConnection(timeoutMs).then(() => this.#throughBreaker());
    }
    this.#throughBreaker();
    return undefined;
  }

  #throughBreaker(): void {
    if (!this.#breaker.admit(this.#client.state() === 'ready')) {
      throw new StoreUnavailableError('Redis is unavailable; the circuit breaker is open', {
        reported: true,
      });
    }
  }

  /** Records a failed call with the breaker; the error to throw for it. */
  #failure(error: unknown): unknown {
    // Redis refusing one command (WRONGTYPE, OOM) counts towards the threshold; silence or a lost
    // connection opens the breaker at once.
    const severe = !this.#client.isReplyError(error);
    const reason = error instanceof Error ? error.message : String(error);
    if (!severe) this.#checkRefusal(reason);
    this.#breaker.failed(reason, severe);
    if (!severe) return error;
    const message = error instanceof StoreUnavailableError ? reason : `Redis is unavailable: ${reason}`;
    return new StoreUnavailableError(message, { cause: error, reported: true }); // the breaker logged it
  }

  /**
   * The latest server time at which the script may still run: when the caller gives up, plus the most
   * the server's clock can be ahead of ours. None with an injected clock (the script then sees the
   * caller's time, not its own) or before the first answer has bounded the offset.
   */
  #deadline(sentAtMs: number, timeoutMs: number | undefined): string {
    if (timeoutMs === undefined || this.clock !== undefined) return '';
    const offsetMs = this.#offset.upperBoundMs();
    return offsetMs === undefined ? '' : String(sentAtMs + timeoutMs + offsetMs);
  }

  /** `{owner}` is the hash tag: every bucket of one owner lands in the same Cluster slot. */
  #keyOf(owner: string, policies: readonly ResolvedPolicy[], ban?: BanRule): string {
    return `${this.#prefix}{${checkedOwner(owner)}}:${policySetKey(policies, ban)}`;
  }

  /**
   * Once each, when Redis refuses a check: a server that runs no scripts, and an ACL user refused a
   * command (logs which, as Redis 7.0 does not say, and what to grant).
   */
  #checkRefusal(reason: string): void {
    if (!this.#noScriptingReported && isScriptingUnavailable(reason)) {
      this.#noScriptingReported = true;
      reportScriptingUnavailable(reason, this.#warnings);
      return;
    }
    if (this.#aclRefusalReported || !isAclRefusal(reason)) return;
    this.#aclRefusalReported = true;
    void reportAclRefusal(this.#client, reason, this.#prefix, this.#warnings);
  }

  /** Once, when Redis refuses a batch script's MGET to the ACL user: checks go on, at more cost to Redis. */
  #keysReadOneByOne(reason: string): void {
    if (this.#mgetRefusalReported || !isAclRefusal(reason)) return;
    this.#mgetRefusalReported = true;
    void reportAclRefusal(this.#client, reason, this.#prefix, this.#warnings, KEYS_READ_ONE_BY_ONE);
  }

  /** Once, after the first answer: warns if Redis may evict live buckets (or, late, if the client queues). */
  #checkServer(): void {
    this.#serverChecked = true;
    this.#queueingChecked ||= checkQueueing(this.#client, this.#warnings);
    void checkEvictionPolicy(this.#client, this.#warnings);
  }
}
