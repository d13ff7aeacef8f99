/**
 * `createConcurrencyLimiter`: at most N at once per key — open uploads, expensive queries in flight —
 * rather than N per window. A lease taken by `acquire` is ended by `release`, or by its time to live if
 * its holder never releases it (a crashed process), so slots cannot leak for good.
 */
import { randomUUID } from 'node:crypto';
import type { LeaseRequest, LeaseResult, Store } from '../model/store.js';
import { MemoryStore } from '../stores/memory/memory-store.js';
import { DeadlineWatch } from '../support/deadline-watch.js';
import { type Duration, parseDuration } from '../support/duration.js';
import { fromSource, TollgateOptionError } from '../support/option-error.js';
import { ownOptions, positiveWholeNumber } from '../support/value-checks.js';
import { bucketOwner } from './bucket-key.js';
import {
  type InsuranceOptions,
  insuranceSettings,
  type OnStoreError,
  type StoreErrorAction,
} from './limiter-options.js';

/** Options of {@link createConcurrencyLimiter}. */
export interface ConcurrencyLimiterOptions {
  /** The most leases a key holds at once. A positive whole number. */
  limit: number;
  /** Where leases live. Default: a new `MemoryStore` (per process). Use a `RedisStore` to share. */
  store?: Store;
  /** Keeps this limiter's keys apart from other limiters' on the same store, as for `createLimiter`. */
  namespace?: string;
  /**
   * How long a lease lives unless released: longer than the work it guards may take. Default: `'1m'`.
   */
  leaseTtl?: Duration;
  /** As for `createLimiter`: how long an acquire waits for a store that gives no answer. Default: `'1s'`. */
  timeout?: Duration | false;
  /** As for `createLimiter`: `'insurance'` (default: leases in this process's memory) or `'throw'`. */
  onStoreError?: OnStoreError;
  /** The insurance limiter: `instances` divides the limit among that many app servers. */
  insurance?: InsuranceOptions;
}

/** A slot held: end it with `release()` when the work is done. */
export interface Lease {
  /** The key it was acquired for. */
  readonly key: string;
  /** This lease's id, unique per acquisition. */
  readonly id: string;
  /** Ends the lease. Releasing twice, or after it expired, changes nothing. */
  release(): Promise<void>;
}

/** The answer to `acquire`. */
export interface LeaseDecision {
  /** Whether a slot was free, and is now held by `lease`. */
  readonly acquired: boolean;
  /** The lease, when acquired. */
  readonly lease: Lease | undefined;
  /** The most leases a key holds at once. */
  readonly limit: number;
  /** Leases the key holds now (this one included, when acquired). */
  readonly held: number;
  /** `true` when the store failed and this process's insurance decided. */
  readonly degraded: boolean;
}

/** A concurrency limiter. */
export interface ConcurrencyLimiter {
  /** The most leases a key holds at once. */
  readonly limit: number;
  /** Takes a lease on `key` if fewer than `limit` are held; never waits for one to be released. */
  acquire(key: string): Promise<LeaseDecision>;
}

type LeaseStore = Store & { lease(request: LeaseRequest): Promise<LeaseResult> };

/**
 * Creates a concurrency limiter. Options are checked here, once.
 *
 * @example
 * const uploads = createConcurrencyLimiter({ store, limit: 2, leaseTtl: '10m', namespace: 'uploads' });
 * const { acquired, lease } = await uploads.acquire(`user:${userId}`);
 * if (!acquired) return tooManyUploads();
 * try { await receiveUpload(); } finally { await lease?.release(); }
 */
export function createConcurrencyLimiter(givenOptions: ConcurrencyLimiterOptions): ConcurrencyLimiter {
  try {
    return concurrencyLimiterOf(givenOptions);
  } catch (error) {
    throw fromSource(error, 'createConcurrencyLimiter');
  }
}

/** {@link createConcurrencyLimiter}'s work: the checks it shares with others leave its name out of their messages. */
function concurrencyLimiterOf(givenOptions: ConcurrencyLimiterOptions): ConcurrencyLimiter {
  if (typeof givenOptions !== 'object' || givenOptions === null) {
    throw new TollgateOptionError('createConcurrencyLimiter needs options like { limit: 10 }');
  }
  // Own fields only: an option not given takes its default, whatever `Object.prototype` holds.
  const options = ownOptions(givenOptions);
  const limit = positiveWholeNumber(options.limit, 'limit');
  const store = (options.store ?? new MemoryStore()) as LeaseStore;
  if (typeof store.lease !== 'function') {
    throw new TollgateOptionError(
      'store must be a Store that holds leases, such as MemoryStore or RedisStore',
    );
  }
  const { namespace = '' } = options;
  if (namespace !== '' && (typeof namespace !== 'string' || !/^[A-Za-z0-9_.:-]{1,64}$/.test(namespace))) {
    throw new TollgateOptionError(
      `namespace must be 1–64 letters, digits or '_ . : -'; got ${String(namespace)}`,
    );
  }
  const ttlMs = parseDuration(options.leaseTtl ?? '1m', 'leaseTtl');
  const timeoutMs = options.timeout === false ? undefined : parseDuration(options.timeout ?? '1s', 'timeout');
  const onStoreError = options.onStoreError ?? 'insurance';
  if (typeof onStoreError !== 'function' && onStoreError !== 'insurance' && onStoreError !== 'throw') {
    throw new TollgateOptionError(
      `onStoreError must be 'insurance', 'throw' or a function; got ${String(onStoreError)}`,
    );
  }
  const { instances } = insuranceSettings(options.insurance ?? {}, 'insurance');
  const insuranceLimit = Math.max(1, Math.floor(limit / instances));
  let insurance: LeaseStore | undefined;
  const watch = store.local === true || store.enforcesTimeout === true ? undefined : new DeadlineWatch();

  /** Runs a lease operation on `on`, given up on after the timeout when the store does not do that itself. */
  function run(on: LeaseStore, request: LeaseRequest): Promise<LeaseResult> {
    const pending = on.lease(request);
    return watch === undefined || timeoutMs === undefined || on !== store
      ? pending
      : watch.watch(pending, timeoutMs);
  }

  function leaseOf(key: string, owner: string, id: string, on: LeaseStore): Lease {
    let released: Promise<void> | undefined;
    return {
      key,
      id,
      release() {
        released ??= run(on, { key: owner, mode: 'release', leaseId: id, limit, ttlMs, timeoutMs }).then(
          () => {},
        );
        return released;
      },
    };
  }

  return {
    limit,
    async acquire(key) {
      const owner = bucketOwner(namespace, key);
      const id = randomUUID();
      const request = { key: owner, mode: 'acquire', leaseId: id, limit, ttlMs, timeoutMs } as const;
      let on = store;
      let result: LeaseResult;
      try {
        result = await run(store, request);
      } catch (error) {
        if (error instanceof TypeError || error instanceof RangeError) throw error;
        const action: StoreErrorAction =
          typeof onStoreError === 'function' ? await onStoreError(error, key) : onStoreError;
        if (action !== 'insurance') throw error;
        insurance ??= new MemoryStore(store.clock ? { clock: store.clock } : {}) as LeaseStore;
        on = insurance;
        result = await run(insurance, { ...request, limit: insuranceLimit });
      }
      const degraded = on !== store;
      return {
        acquired: result.applied,
        lease: result.applied ? leaseOf(key, owner, id, on) : undefined,
        limit: degraded ? insuranceLimit : limit,
        held: result.held,
        degraded,
      };
    },
  };
}
