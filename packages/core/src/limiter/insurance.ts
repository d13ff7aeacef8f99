/**
 * The insurance limiter: when the shared store fails, checks are decided by the same policies in this
 * process's memory, so an outage loosens the limit to per-process counting instead of removing it.
 */

import { decide } from '../algorithms/decide.js';
import { resolvePolicies } from '../algorithms/policies.js';
import type { BanRule } from '../model/ban.js';
import type { Decision } from '../model/decision.js';
import type { ResolvedPolicy } from '../model/policy.js';
import type { BucketMode } from '../model/store.js';
import { MemoryStore } from '../stores/memory/memory-store.js';
import type { InsuranceOptions } from './limiter-options.js';

/** Decides checks in process memory; built on first use. */
export interface Insurance {
  /** The policies it decides by: the limiter's, each limit and burst divided by `instances`. */
  readonly policies: readonly ResolvedPolicy[];
  /**
   * Decides `mode` for `cost` tokens of `owner`'s buckets; `chargedAtMs`: for a refund, when the tokens
   * given back were charged (see `BucketRequest.chargedAtMs`).
   */
  decide(owner: string, cost: number, mode: BucketMode, chargedAtMs?: number): Promise<Decision>;
  /** Forgets an owner's buckets, so they are full (nothing to do before the store is built). */
  reset(owner: string): Promise<void>;
}

/**
 * The insurance of a limiter, from its checked settings; the store is made only when first needed. It
 * keeps time by `clock` (the main store's injected clock, if any), so tests move both together.
 *
 * @example
 * const insurance = insuranceFor(limiter.policies, { instances: 4, maxKeys: 100_000 });
 * const decision = await insurance.decide(owner, 1, 'consume'); // decision.degraded === true
 */
export function insuranceFor(
  policies: readonly ResolvedPolicy[],
  { instances, maxKeys }: Required<InsuranceOptions>,
  clock?: () => number,
  ban?: BanRule,
): Insurance {
  const share = (tokens: number) => Math.max(1, Math.floor(tokens / instances));
  const shared = resolvePolicies(
    // Each policy counts as it does on the store (a fixed window stays a fixed window), on its share.
    policies.map(({ name, algorithm, limit, windowMs, capacity, nearLimit }) => ({
      name,
      algorithm,
      limit: share(limit),
      window: windowMs,
      ...(algorithm === 'token-bucket' ? { burst: share(capacity) } : {}),
      // Near the insurance's own, smaller, limit at the same fraction.
      ...(nearLimit === undefined ? {} : { nearLimit }),
    })),
  );
  // Whether a cost can ever be admitted is the real policies' to say, not the shares': a cost only a
  // share cannot hold is charged the smallest share whole, so it waits for a full share (a 429 with a
  // wait) instead of being refused outright for as long as the outage lasts.
  const smallestCapacity = Math.min(...policies.map((p) => p.capacity));
  const smallestShare = Math.min(...shared.map((p) => p.capacity));
  let store: MemoryStore | undefined;
  return {
    policies: shared,
    async decide(owner, cost, mode, chargedAtMs) {
      store ??= new MemoryStore({ maxKeys, ...(clock ? { clock } : {}) });
      if (mode === 'consume' && cost > smallestCapacity) mode = 'peek';
      const checks = mode === 'consume' || mode === 'peek';
      const charged = checks && cost <= smallestCapacity ? Math.min(cost, smallestShare) : cost;
      const request = { key: owner, policies: shared, cost: charged, mode, ban, chargedAtMs };
      const result = await store.update(request);
      return { ...decide(shared, result, charged), cost, degraded: true };
    },
    async reset(owner) {
      await store?.reset(owner, shared, ban);
    },
  };
}
