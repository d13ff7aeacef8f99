/** Buckets in Redis, shared by every app server: each operation is one Lua script in one round trip. */
import { createHash } from 'node:crypto';
import { TOKEN_BUCKET_LUA } from '../../algorithms/token-bucket/token-bucket.lua.js';
import { DeadlineWatch } from '../../deadline-watch.js';
import { publishBreakerClose, publishBreakerOpen } from '../../diagnostics/publish.js';
import { type Duration, parseDuration } from '../../duration.js';
import { type Logger, type WarningSwitches, Warnings } from '../../http/warnings.js';
import type { ResolvedPolicy } from '../../policy.js';
import type { BucketRequest, BucketResult, Store } from '../../store.js';
import { StoreUnavailableError } from '../../store-error.js';
import { policySetKey } from '../policy-set-key.js';
import { adaptRedisClient } from './adapt-client.js';
import { CircuitBreaker } from './breaker.js';
import { clusterSlot } from './cluster-slot.js';
import type { LuaScript, RedisClientAdapter, RedisClientLike } from './redis-client.js';
import { type ScriptAnswer, ScriptBatcher } from './script-batcher.js';
import { ServerClockOffset } from './server-clock.js';
import { checkEvictionPolicy, checkQueueing } from './setup-checks.js';

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  /**
   * An ioredis `Redis` or `Cluster` (v5, v6), or a node-redis client or cluster (`createClient`,
   * `createCluster`; v4, v5), told apart by their shape. Create it to fail fast — ioredis:
   * `{ enableOfflineQueue: false, maxRetriesPerRequest: 0 }`; node-redis: `{ disableOfflineQueue: true }`
   * (a cluster: in `defaults`) — and give it an `'error'` listener; the store warns once otherwise.
   * Connect a node-redis client yourself (`await client.connect()`), as node-redis wants.
   */
  client: RedisClientLike;
  /** Put before every key, to keep Tollgate's keys apart. No `{` or `}`. Default: `'tollgate:'`. */
  prefix?: string;
  /**
   * A clock in ms since the epoch, for tests. Default: none — the script reads the Redis server's clock,
   * so app servers with skewed clocks still share one timeline.
   */
  clock?: () => number;
  /**
   * The circuit breaker: after `threshold` failures in a row (or at once when Redis goes silent or the
   * connection drops), no check is sent for `cooldown`; then one probe is. Default: `{ threshold: 5,
   * cooldown: '1s' }`.
   */
  breaker?: { threshold?: number; cooldown?: Duration };
  /** Where incidents and setup warnings go. Default: `console`. */
  logger?: Logger;
  /** Switch the store's warnings off, all (`false`) or by code. Default: on. */
  warnings?: WarningSwitches;
}

const SCRIPT: LuaScript = {
  source: TOKEN_BUCKET_LUA,
  sha1: createHash('sha1').update(TOKEN_BUCKET_LUA).digest('hex'),
};

/** The script's first answer field for a check that ran past its deadline and changed nothing. */
const EXPIRED = -1;
/** …and for a check whose key Redis refused (another type, no memory to write): it changed nothing. */
const REFUSED = -2;

/** The most checks in one script call: about a millisecond of Redis's time. */
const MAX_BATCH = 200;

/** Redis refused one check's key (WRONGTYPE, OOM): the other checks of its batch were decided. */
class RefusedCheckError extends Error {
  override readonly name = 'ReplyError';
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

  constructor(options: RedisStoreOptions) {
    const {
      client,
      prefix = 'tollgate:',
      clock,
      breaker = {},
      logger = console,
      warnings = true,
    } = options ?? ({} as RedisStoreOptions);
    const adapter = adaptRedisClient(client);
    if (adapter === undefined) {
      throw new TypeError(
        'RedisStore needs { client }: an ioredis Redis or Cluster, or a node-redis client or cluster',
      );
    }
    if (typeof prefix !== 'string' || /[{}]/.test(prefix)) {
      throw new TypeError(`RedisStore prefix must be a string without '{' or '}'; got ${String(prefix)}`);
    }
    if (clock !== undefined && typeof clock !== 'function') {
      throw new TypeError('RedisStore clock must be a function returning ms');
    }
    if (typeof logger?.warn !== 'function' || typeof logger.error !== 'function') {
      throw new TypeError('RedisStore logger must have warn and error methods');
    }
    this.#client = adapter;
    this.#batcher = new ScriptBatcher({
      send: (keys, args) => adapter.runScript(SCRIPT, keys, args) as Promise<unknown[]>,
      groupOf: adapter.clustered ? clusterSlot : () => 0,
      deadlineArg: (sentAtMs, timeoutMs) => this.#deadline(sentAtMs, timeoutMs),
      watch: this.#watch,
      maxBatch: MAX_BATCH,
    });
    this.#prefix = prefix;
    this.clock = clock;
    this.#warnings = new Warnings(logger, warnings);
    this.#breaker = new CircuitBreaker(breakerSettings(breaker), {
      opened: (reason) => {
        this.#warnings.event(
          'TOLLGATE_STORE_UNAVAILABLE',
          'error',
          `Redis is unavailable (${reason}): checks take the limiters' fallback until it answers again`,
        );
        publishBreakerOpen(this, prefix, reason);
      },
      recovered: (downForMs, fallbacks) => {
        this.#warnings.event(
          'TOLLGATE_STORE_RECOVERED',
          'warn',
          `Redis answers again after ${(downForMs / 1000).toFixed(1)} s; ${fallbacks} checks took the fallback meanwhile`,
        );
        publishBreakerClose(this, prefix, downForMs, fallbacks);
      },
    });
    this.#queueingChecked = checkQueueing(adapter, this.#warnings);
  }

  /** {@inheritDoc Store.update} */
  async update({ key, policies, cost, mode, timeoutMs }: BucketRequest): Promise<BucketResult> {
    const storeKey = this.#keyOf(key, policies);
    const nowArg = this.clock === undefined ? '' : String(checkedNow(this.clock));
    const check = { key: storeKey, policies, nowArg, cost, mode, timeoutMs };
    // The batcher gives up on the check itself, timing it from when it is really written.
    const { answer, sentAtMs } = (await this.#call(
      timeoutMs,
      () => this.#batcher.run(check),
      false,
    )) as ScriptAnswer;
    const status = Number(answer[0]);
    const nowMs = Number(answer[1]);
    if (this.clock === undefined) {
      if (status === EXPIRED) this.#offset.forget(); // our bound was too early: the server's clock stepped
      this.#offset.sample(nowMs, sentAtMs);
    }
    if (status === EXPIRED || status === REFUSED) {
      const why = status === EXPIRED ? 'checks ran after their deadline' : String(answer[2]);
      this.#breaker.failed(why, false);
      if (status === REFUSED) throw new RefusedCheckError(why);
      throw new StoreUnavailableError(`Redis ran the check after its ${timeoutMs} ms deadline`, {
        reported: !this.#breaker.closed,
      });
    }
    this.#breaker.succeeded();
    if (!this.#serverChecked) this.#checkServer();
    return { applied: status === 1, nowMs, levelUnits: answer.slice(2).map(Number) };
  }

  /** {@inheritDoc Store.reset} */
  async reset(key: string, policies: readonly ResolvedPolicy[]): Promise<void> {
    const storeKey = this.#keyOf(key, policies);
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
   * Sends through the breaker (waiting up to `timeoutMs` for a first connection), gives up on the answer
   * after `timeoutMs` if asked to `watch` it, and records failures.
   */
  async #call(timeoutMs: number | undefined, send: () => Promise<unknown>, watch: boolean): Promise<unknown> {
    if (this.#client.state() === 'starting') await this.#firstConnection(timeoutMs);
    if (!this.#breaker.admit(this.#client.state() === 'ready')) {
      throw new StoreUnavailableError('Redis is unavailable; the circuit breaker is open', {
        reported: true,
      });
    }
    try {
      return !watch || timeoutMs === undefined ? await send() : await this.#watch.watch(send(), timeoutMs);
    } catch (error) {
      // Redis refusing one command (WRONGTYPE, OOM) counts towards the threshold; silence or a lost
      // connection opens the breaker at once.
      const severe = !this.#client.isReplyError(error);
      const reason = error instanceof Error ? error.message : String(error);
      this.#breaker.failed(reason, severe);
      if (!severe) throw error;
      const message = error instanceof StoreUnavailableError ? reason : `Redis is unavailable: ${reason}`;
      throw new StoreUnavailableError(message, { cause: error, reported: true }); // the breaker logged it
    }
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
  #keyOf(owner: string, policies: readonly ResolvedPolicy[]): string {
    if (owner.includes('{') || owner.includes('}')) {
      throw new TypeError(`RedisStore keys must not hold '{' or '}' (limiters encode them); got ${owner}`);
    }
    return `${this.#prefix}{${owner}}:${policySetKey(policies)}`;
  }

  /** Once, after the first answer: warns if Redis may evict live buckets (or, late, if the client queues). */
  #checkServer(): void {
    this.#serverChecked = true;
    this.#queueingChecked ||= checkQueueing(this.#client, this.#warnings);
    void checkEvictionPolicy(this.#client, this.#warnings);
  }
}

function breakerSettings({ threshold = 5, cooldown = '1s' }: NonNullable<RedisStoreOptions['breaker']>) {
  if (!Number.isSafeInteger(threshold) || threshold <= 0) {
    throw new TypeError(
      `RedisStore breaker.threshold must be a positive whole number; got ${String(threshold)}`,
    );
  }
  return { threshold, cooldownMs: parseDuration(cooldown, 'RedisStore breaker.cooldown') };
}

function checkedNow(clock: () => number): number {
  const nowMs = Math.floor(clock());
  if (!Number.isFinite(nowMs)) {
    throw new TypeError(`RedisStore clock must return ms since the epoch; got ${String(nowMs)}`);
  }
  return nowMs;
}
