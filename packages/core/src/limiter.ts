/** `createLimiter`: policies and a store put together behind consume / peek / refund / reset. */
import type { Decision } from './decision.js';
import { decide } from './decision.js';
import { boundIdentity } from './identity.js';
import { MemoryStore } from './memory-store.js';
import { type Policy, type ResolvedPolicy, resolvePolicies } from './policy.js';
import type { BucketMode, Store } from './store.js';

/** Options of {@link createLimiter}. */
export interface LimiterOptions {
  /** One policy, or several checked and charged together (all or none). */
  policies: Policy | readonly Policy[];
  /** Where buckets live. Default: a new {@link MemoryStore} (per process). Use a `RedisStore` to share. */
  store?: Store;
  /**
   * Keeps this limiter's buckets apart from other limiters' on the same store. Letters, digits and
   * `_ . : -`, at most 64. Default: none (the key alone names the bucket, per policy name).
   */
  namespace?: string;
}

/** Options of a single check. */
export interface ConsumeOptions {
  /** Tokens this request costs: any positive number. Default: `1`. */
  cost?: number;
}

/** A rate limiter. Every method is atomic across all of its policies. */
export interface Limiter {
  /** The policies, validated and resolved. */
  readonly policies: readonly ResolvedPolicy[];
  /** Charges `cost` to every policy if all have it (then `allowed`), else charges nothing. */
  consume(key: string, options?: ConsumeOptions): Promise<Decision>;
  /** Answers as `consume` would, charging nothing. */
  peek(key: string, options?: ConsumeOptions): Promise<Decision>;
  /** Gives `cost` tokens back to every policy (never beyond capacity), e.g. when a request failed. Default cost: 1. */
  refund(key: string, cost?: number): Promise<void>;
  /** Refills every bucket of `key` at once. */
  reset(key: string): Promise<void>;
}

const NAMESPACE_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * Creates a limiter. Options are checked here, once: bad ones throw a `TypeError` naming the field.
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
  if (typeof options !== 'object' || options === null) {
    throw new TypeError("createLimiter needs options like { policies: { limit: 100, window: '1m' } }");
  }
  const policies = resolvePolicies(options.policies);
  const store = options.store ?? new MemoryStore();
  if (typeof store.update !== 'function' || typeof store.reset !== 'function') {
    throw new TypeError('store must be a Store such as MemoryStore or RedisStore');
  }
  const { namespace } = options;
  if (namespace !== undefined && (typeof namespace !== 'string' || !NAMESPACE_PATTERN.test(namespace))) {
    throw new TypeError(`namespace must be 1–64 letters, digits or '_ . : -'; got ${String(namespace)}`);
  }
  const keyPrefix = namespace === undefined ? '' : `${namespace}:`;
  const keyOf = (key: string) => keyPrefix + boundIdentity(key);
  const smallestCapacity = Math.min(...policies.map((p) => p.capacity));

  async function run(key: string, requestedCost: number | undefined, mode: BucketMode): Promise<Decision> {
    const cost = costOf(requestedCost);
    // A cost some bucket can never hold is only looked at: charging the others would break all-or-none.
    const effectiveMode = mode === 'consume' && cost > smallestCapacity ? 'peek' : mode;
    const result = await store.update({
      key: keyOf(key),
      policies,
      cost,
      mode: effectiveMode,
    });
    return decide(policies, result, cost);
  }

  return {
    policies,
    consume: (key, opts) => run(key, opts?.cost, 'consume'),
    peek: (key, opts) => run(key, opts?.cost, 'peek'),
    async refund(key, cost) {
      await run(key, cost, 'refund');
    },
    async reset(key) {
      await store.reset(keyOf(key), policies);
    },
  };
}

function costOf(cost: number | undefined): number {
  if (cost === undefined) return 1;
  if (typeof cost !== 'number' || !Number.isFinite(cost) || cost <= 0) {
    throw new TypeError(`cost must be a positive finite number; got ${String(cost)}`);
  }
  return cost;
}
