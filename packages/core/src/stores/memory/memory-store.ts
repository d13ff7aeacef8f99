/** Buckets in this process's memory: the default store, for one server, for tests, and as insurance. */

import type { BanRule } from '../../algorithms/ban/ban.js';
import { acquireLease, type Leases, releaseLease } from '../../algorithms/concurrency/leases.js';
import { settlePolicies } from '../../algorithms/settle.js';
import type { ResolvedPolicy } from '../../policy.js';
import type { BucketRequest, BucketResult, LeaseRequest, LeaseResult, Store } from '../../store.js';
import { policySetKey } from '../policy-set-key.js';
import { EvictionHeap, type HeapEntry } from './eviction-heap.js';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * The most keys kept (one per identity and set of policies, holding all of its buckets). When full,
   * the key soonest idle is forgotten (buckets full again, windows over): an idle one if there is one
   * (that changes nothing), else the one closest to it. Default: `100_000`.
   */
  maxKeys?: number;
  /** The clock, in ms since the epoch. Default: `Date.now`. Inject one in tests. */
  clock?: () => number;
}

/** One key's states, and where it sits among the keys to forget. */
interface StoredKey extends HeapEntry {
  readonly owner: string;
  readonly table: Map<string, StoredKey>;
  /** Each policy's state, in policy order. */
  states: readonly (readonly number[])[];
}

/**
 * A store in process memory with the same semantics as {@link RedisStore}. Bounded by `maxKeys` with
 * O(log n) eviction and no timers, so it never stalls or keeps the process alive. Counts are per process:
 * behind a load balancer use Redis.
 *
 * @example
 * const limiter = createLimiter({ store: new MemoryStore({ maxKeys: 10_000 }), policies: { limit: 5, window: '1s' } });
 */
export class MemoryStore implements Store {
  /** {@inheritDoc Store.local} */
  readonly local = true;
  /** {@inheritDoc Store.clock} */
  readonly clock: (() => number) | undefined;
  readonly #now: () => number;
  readonly #maxKeys: number;
  /** Keys by policy set: limiters with equal policies and namespace share buckets, as on Redis. */
  readonly #tables = new Map<string, Map<string, StoredKey>>();
  readonly #tableOf = new WeakMap<object, Map<string, StoredKey>>();
  readonly #heap = new EvictionHeap<StoredKey>();
  /** Leases by key, for concurrency limits: a key goes when its last lease does. */
  readonly #leases = new Map<string, Leases>();

  constructor(options: MemoryStoreOptions = {}) {
    const { maxKeys = 100_000, clock } = options;
    if (!Number.isSafeInteger(maxKeys) || maxKeys <= 0) {
      throw new TypeError(`MemoryStore maxKeys must be a positive whole number; got ${String(maxKeys)}`);
    }
    if (clock !== undefined && typeof clock !== 'function') {
      throw new TypeError('MemoryStore clock must be a function returning ms');
    }
    this.#maxKeys = maxKeys;
    this.clock = clock;
    this.#now = clock ?? Date.now;
  }

  /**
   * The number of keys held now. A key an operation leaves idle is forgotten at once; one that became
   * idle over time stays until it is read, reset or evicted.
   */
  get size(): number {
    return this.#heap.size;
  }

  /** {@inheritDoc Store.update} */
  async update({ key, policies, cost, mode, ban }: BucketRequest): Promise<BucketResult> {
    const nowMs = this.#checkedNow();
    const table = this.#table(policies, ban);
    const stored = table.get(key);
    const current = stored && stored.idleAtMs > nowMs ? stored.states : undefined;
    const { applied, states, bannedUntilMs, write } = settlePolicies(
      policies,
      current,
      cost,
      mode,
      nowMs,
      ban,
    );
    if (write === null) {
      if (stored) this.#forget(stored);
    } else if (write !== undefined) {
      const idleAtMs = nowMs + write.ttlMs;
      if (stored) {
        stored.states = write.states;
        stored.idleAtMs = idleAtMs;
        this.#heap.updated(stored);
      } else {
        this.#insert(table, { owner: key, table, states: write.states, idleAtMs, heapKey: 0, heapIndex: 0 });
      }
    }
    return { applied, nowMs, states, bannedUntilMs };
  }

  /** {@inheritDoc Store.lease} */
  async lease({ key, mode, leaseId, limit, ttlMs }: LeaseRequest): Promise<LeaseResult> {
    const nowMs = this.#checkedNow();
    const leases = this.#leases.get(key) ?? new Map<string, number>();
    const { applied, held } =
      mode === 'acquire'
        ? acquireLease(leases, leaseId, limit, ttlMs, nowMs)
        : releaseLease(leases, leaseId, nowMs);
    if (held === 0) this.#leases.delete(key);
    else if (!this.#leases.has(key)) this.#makeRoomForLeases(nowMs).set(key, leases);
    return { applied, held, nowMs };
  }

  /** {@inheritDoc Store.reset} */
  async reset(key: string, policies: readonly ResolvedPolicy[], ban?: BanRule): Promise<void> {
    const stored = this.#table(policies, ban).get(key);
    if (stored) this.#forget(stored);
  }

  #checkedNow(): number {
    const nowMs = Math.floor(this.#now());
    if (!Number.isFinite(nowMs)) {
      throw new TypeError(`MemoryStore clock must return ms since the epoch; got ${String(nowMs)}`);
    }
    return nowMs;
  }

  /**
   * The lease table, with room for one more key: at `maxKeys` keys, those whose leases have all expired
   * (their holders never released them) are forgotten. Live leases are never dropped: each is a request
   * in flight, so their number is bounded by the app's own concurrency.
   */
  #makeRoomForLeases(nowMs: number): Map<string, Leases> {
    if (this.#leases.size >= this.#maxKeys) {
      for (const [key, leases] of this.#leases) {
        if ([...leases.values()].every((expiresAtMs) => expiresAtMs <= nowMs)) this.#leases.delete(key);
      }
    }
    return this.#leases;
  }

  #table(policies: readonly ResolvedPolicy[], ban: BanRule | undefined): Map<string, StoredKey> {
    let table = this.#tableOf.get(ban ?? policies);
    if (table === undefined) {
      const setKey = policySetKey(policies, ban);
      table = this.#tables.get(setKey) ?? new Map<string, StoredKey>();
      this.#tables.set(setKey, table);
      this.#tableOf.set(ban ?? policies, table);
    }
    return table;
  }

  #insert(table: Map<string, StoredKey>, stored: StoredKey): void {
    if (this.#heap.size >= this.#maxKeys) {
      const soonestIdle = this.#heap.popSoonestIdle() as StoredKey;
      soonestIdle.table.delete(soonestIdle.owner);
    }
    table.set(stored.owner, stored);
    this.#heap.push(stored);
  }

  #forget(stored: StoredKey): void {
    stored.table.delete(stored.owner);
    this.#heap.remove(stored);
  }
}
