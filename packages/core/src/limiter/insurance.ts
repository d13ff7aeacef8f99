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
import { TollgateOptionError } from '../support/option-error.js';
import { rejectUnknownNames } from '../support/unknown-names.js';
import { isSettingsObject, ownOptions, positiveWholeNumber } from '../support/value-checks.js';

/** Options of the insurance limiter. */
export interface InsuranceOptions {
  /**
   * How many app instances usually share the store. Each instance's insurance keeps `1/instances` of
   * every limit and burst (at least one token), so the instances together stay near the real limit. A
   * request that costs more than a share holds (but no more than the policies do) is charged a whole
   * share: admitted when the share is full, else refused with the wait until it is.
   * Default: `1` (each instance allows the full limit on its own).
   */
  instances?: number;
  /** The most keys the insurance store holds. Default: `100_000`. */
  maxKeys?: number;
}

/**
 * Checks insurance options, with defaults applied; throws a `TypeError` naming `what`.
 *
 * @example
 * insuranceSettings({ instances: 4 }, 'insurance'); // { instances: 4, maxKeys: 100_000 }
 */
export function insuranceSettings(options: unknown, what: string): Required<InsuranceOptions> {
  if (!isSettingsObject(options))
    throw new TollgateOptionError(`${what} must be an object like { instances: 4 }`);
  rejectUnknownNames(options, ['instances', 'maxKeys'], new Map(), `${what} has an unknown field`);
  // Own fields only: a default is the default, whatever `Object.prototype` holds.
  const { instances = 1, maxKeys = 100_000 } = ownOptions(options);
  return {
    instances: positiveWholeNumber(instances, `${what}.instances`),
    maxKeys: positiveWholeNumber(maxKeys, `${what}.maxKeys`),
  };
}

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
 * The insurance of a limiter. Options are checked now; the store is made only when first needed. It
 * keeps time by `clock` (the main store's injected clock, if any), so tests move both together.
 *
 * @example
 * const insurance = insuranceFor(limiter.policies, { instances: 4 });
 * const decision = await insurance.decide(owner, 1, 'consume'); // decision.degraded === true
 */
export function insuranceFor(
  policies: readonly ResolvedPolicy[],
  options: InsuranceOptions = {},
  clock?: () => number,
  ban?: BanRule,
): Insurance {
  const { instances, maxKeys } = insuranceSettings(options, 'insurance');
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
