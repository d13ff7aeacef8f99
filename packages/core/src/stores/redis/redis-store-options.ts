/** The options of `RedisStore`, checked once, and the inputs it checks on every call. */
import { publishBreakerClose, publishBreakerOpen } from '../../diagnostics/publish.js';
import type { Store } from '../../model/store.js';
import { TollgateArgumentError } from '../../support/argument-error.js';
import { type Duration, parseDuration } from '../../support/duration.js';
import { TollgateOptionError } from '../../support/option-error.js';
import { ownOptions } from '../../support/value-checks.js';
import type { Logger, WarningSwitches, Warnings } from '../../support/warnings.js';
import { adaptRedisClient, describeClient, SUPPORTED_CLIENTS } from './adapt-client.js';
import { type BreakerSettings, CircuitBreaker } from './breaker.js';
import type { RedisClientAdapter, RedisClientLike } from './redis-client.js';

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  /**
   * An ioredis `Redis` or `Cluster` (v5, v6), an iovalkey `Redis` or `Cluster` (0.4), a node-redis client
   * or cluster (`createClient`, `createCluster`; v4 to v6), or a Valkey GLIDE `GlideClient` or
   * `GlideClusterClient` (v2), told apart by their shape. Create it to fail fast — ioredis and iovalkey:
   * `{ enableOfflineQueue: false, maxRetriesPerRequest: 0 }`; node-redis: `{ disableOfflineQueue: true }`
   * (a cluster: in `defaults`); GLIDE: `{ requestTimeout }` equal to the limiter's `timeout` (GLIDE's
   * default, 250 ms, gives up on scripts Redis may still run) — and give ioredis, iovalkey and node-redis
   * an `'error'` listener; the store warns once otherwise. Connect a node-redis client yourself
   * (`await client.connect()`), as node-redis wants; GLIDE's `createClient()` connects. Any other client
   * is refused at construction.
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
/** The options after checking, with defaults applied. */
export interface ResolvedRedisStoreOptions {
  readonly adapter: RedisClientAdapter;
  readonly prefix: string;
  readonly clock: (() => number) | undefined;
  readonly logger: Logger;
  readonly warnings: WarningSwitches;
  readonly breaker: BreakerSettings;
}

/** Checks the options once, at construction; throws a `TypeError` naming the option. */
export function resolveRedisStoreOptions(options: RedisStoreOptions): ResolvedRedisStoreOptions {
  // Own fields only: an option not given takes its default, whatever `Object.prototype` holds.
  const {
    client,
    prefix = 'tollgate:',
    clock,
    breaker = {},
    logger = console,
    warnings = true,
  } = ownOptions(options ?? ({} as RedisStoreOptions));
  const adapter = adaptRedisClient(client);
  if (adapter === undefined) {
    throw new TollgateOptionError(
      `RedisStore needs { client }: ${SUPPORTED_CLIENTS}; got ${describeClient(client)}`,
    );
  }
  if (typeof prefix !== 'string' || /[{}]/.test(prefix)) {
    throw new TollgateOptionError(
      `RedisStore prefix must be a string without '{' or '}'; got ${String(prefix)}`,
    );
  }
  if (clock !== undefined && typeof clock !== 'function') {
    throw new TollgateOptionError('RedisStore clock must be a function returning ms');
  }
  if (typeof logger?.warn !== 'function' || typeof logger.error !== 'function') {
    throw new TollgateOptionError('RedisStore logger must have warn and error methods');
  }
  return {
    adapter,
    prefix,
    clock,
    logger,
    warnings: ownOptions(warnings),
    breaker: breakerSettings(ownOptions(breaker)),
  };
}

/**
 * The store's circuit breaker, which reports each incident once when it starts and once when it ends,
 * in the log and on the `tollgate:breaker-*` diagnostics channels.
 */
export function incidentBreaker(
  settings: BreakerSettings,
  warnings: Warnings,
  store: Store,
  prefix: string,
): CircuitBreaker {
  return new CircuitBreaker(settings, {
    opened: (reason) => {
      warnings.event(
        'TOLLGATE_STORE_UNAVAILABLE',
        'error',
        `Redis is unavailable (${reason}): checks take the limiters' fallback until it answers again`,
      );
      publishBreakerOpen(store, prefix, reason);
    },
    recovered: (downForMs, fallbacks) => {
      warnings.event(
        'TOLLGATE_STORE_RECOVERED',
        'warn',
        `Redis answers again after ${(downForMs / 1000).toFixed(1)} s; ${fallbacks} checks took the fallback meanwhile`,
      );
      publishBreakerClose(store, prefix, downForMs, fallbacks);
    },
  });
}

function breakerSettings({ threshold = 5, cooldown = '1s' }: NonNullable<RedisStoreOptions['breaker']>) {
  if (!Number.isSafeInteger(threshold) || threshold <= 0) {
    throw new TollgateOptionError(
      `RedisStore breaker.threshold must be a positive whole number; got ${String(threshold)}`,
    );
  }
  return { threshold, cooldownMs: parseDuration(cooldown, 'RedisStore breaker.cooldown') };
}

/** The injected clock's time, which must be a number of ms. */
export function checkedNow(clock: () => number): number {
  const nowMs = Math.floor(clock());
  if (!Number.isFinite(nowMs)) {
    throw new TollgateOptionError(`RedisStore clock must return ms since the epoch; got ${String(nowMs)}`);
  }
  return nowMs;
}

/** The owner, which limiters encode so that it holds no brace: the braces of the hash tag are ours. */
export function checkedOwner(owner: string): string {
  if (owner.includes('{') || owner.includes('}')) {
    throw new TollgateArgumentError(
      `RedisStore keys must not hold '{' or '}' (limiters encode them); got ${owner}`,
    );
  }
  return owner;
}
