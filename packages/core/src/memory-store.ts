/** Buckets in this process's memory: the default store, for one server and for the demo. */
import type { ResolvedPolicy } from './policy.js';
import type { BucketRequest, BucketResult, Store } from './store.js';
import { type BucketState, settleBuckets } from './token-bucket.js';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * The most buckets kept (one per key and policy). When full, buckets that have refilled are forgotten
   * first (that changes nothing); if that is not enough, those closest to full. Default: `100_000`.
   */
  maxKeys?: number;
  /** The clock, in ms since the epoch. Default: `Date.now`. Inject one in tests. */
  clock?: () => number;
}

interface StoredBucket extends BucketState {
  /** When the bucket is full again, so forgetting it is harmless from then on. */
  readonly fullAtMs: number;
}

/** The share of buckets forgotten at once when none has refilled, so eviction is rare, not per call. */
const EVICT_FRACTION = 0.1;

/**
 * A store in process memory with the same semantics as {@link RedisStore}. Bounded by `maxKeys`, with no
 * timers, so it never keeps the process alive. Counts are per process: behind a load balancer use Redis.
 *
 * @example
 * const limiter = createLimiter({ store: new MemoryStore({ maxKeys: 10_000 }), policies: { limit: 5, window: '1s' } });
 */
export class MemoryStore implements Store {
  readonly #buckets = new Map<string, StoredBucket>();
  readonly #maxKeys: number;
  readonly #clock: () => number;

  constructor(options: MemoryStoreOptions = {}) {
    const { maxKeys = 100_000, clock = Date.now } = options;
    if (!Number.isSafeInteger(maxKeys) || maxKeys <= 0) {
      throw new TypeError(`MemoryStore maxKeys must be a positive whole number; got ${String(maxKeys)}`);
    }
    if (typeof clock !== 'function') throw new TypeError('MemoryStore clock must be a function returning ms');
    this.#maxKeys = maxKeys;
    this.#clock = clock;
  }

  /**
   * The number of buckets held now. A bucket charged back to full is dropped at once; one that refilled
   * over time stays until it is read or evicted.
   */
  get size(): number {
    return this.#buckets.size;
  }

  /** {@inheritDoc Store.update} */
  async update({ key, policies, cost, mode }: BucketRequest): Promise<BucketResult> {
    const nowMs = Math.floor(this.#clock());
    const keys = policies.map((policy) => bucketKey(key, policy));
    const states = keys.map((k) => this.#read(k, nowMs));
    const { applied, levelUnits, writes } = settleBuckets(policies, states, cost, mode, nowMs);
    writes?.forEach((write, i) => {
      const k = keys[i] as string;
      if (write === null) this.#buckets.delete(k);
      else this.#write(k, { ...write.state, fullAtMs: nowMs + write.ttlMs }, nowMs);
    });
    return { applied, nowMs, levelUnits };
  }

  /** {@inheritDoc Store.reset} */
  async reset(key: string, policies: readonly ResolvedPolicy[]): Promise<void> {
    for (const policy of policies) this.#buckets.delete(bucketKey(key, policy));
  }

  #read(key: string, nowMs: number): BucketState | undefined {
    const bucket = this.#buckets.get(key);
    return bucket && bucket.fullAtMs > nowMs ? bucket : undefined;
  }

  #write(key: string, bucket: StoredBucket, nowMs: number): void {
    if (!this.#buckets.has(key) && this.#buckets.size >= this.#maxKeys) this.#makeRoom(nowMs);
    this.#buckets.set(key, bucket);
  }

  /** Forgets refilled buckets; if none were, forgets the tenth of buckets closest to full. */
  #makeRoom(nowMs: number): void {
    for (const [key, bucket] of this.#buckets) {
      if (bucket.fullAtMs <= nowMs) this.#buckets.delete(key);
    }
    if (this.#buckets.size < this.#maxKeys) return;
    const soonestFull = [...this.#buckets].sort(([, a], [, b]) => a.fullAtMs - b.fullAtMs);
    const count = Math.max(1, Math.floor(this.#maxKeys * EVICT_FRACTION));
    for (const [key] of soonestFull.slice(0, count)) this.#buckets.delete(key);
  }
}

/** One map entry per key and policy; the newline cannot occur in a policy name. */
function bucketKey(key: string, policy: ResolvedPolicy): string {
  return `${policy.name}\n${key}`;
}
