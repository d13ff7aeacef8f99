/**
 * The core limiters behind an HTTP limiter, each with the header writers for its policies: one for
 * static policies, one per distinct limit when `limit` is a function of the request (the limits used
 * lately only, so that limits from a database of customers cannot grow the heap without bound). And the
 * per-key controls that reach them.
 */
import { type Limiter, limiterFrom } from '../../limiter/limiter.js';
import { limiterConfigOf, type OnStoreError } from '../../limiter/limiter-options.js';
import { zeroLimiter } from '../../limiter/zero-limit.js';
import type { ResolvedPolicy } from '../../model/policy.js';
import { TollgateOptionError } from '../../support/option-error.js';
import {
  createHeaderWriter,
  followingOverrides,
  type HeaderWriter,
  withSwitches,
} from '../answer/headers.js';
import type { PerRequestPolicy, ResolvedRateLimitOptions } from '../options/options.js';
import type { KeyControls } from './key-controls.js';

/**
 * The most limiters kept for the distinct values of a `limit` function. Each holds 2–3 KB (its
 * policies, header writers, deny cache and insurance), so at most about 3 MB; a plan-based app has a
 * handful of limits, and one with more distinct limits than this rebuilds a limiter (~10 µs) when a
 * limit comes back after a thousand others. The `limit` option's docs (options.ts) cite this number.
 */
export const BOUND_LIMITERS_KEPT = 1_000;

/**
 * The most limits remembered after their limiter was let go, so that `resetKey` still reaches their
 * buckets: a number each. Beyond this, the limits let go longest ago are forgotten, and a reset leaves
 * their buckets to refill by themselves. Each remembered limit costs a reset one more store reset (and a
 * limiter built for it, ~10 µs), as each built limiter did before limiters were let go; the `limit`
 * option's docs cite this number.
 */
export const LIMITS_REMEMBERED = 10_000;

/** A limiter with the header writers for its policies, built together once. */
export interface BoundLimiter {
  readonly limiter: Limiter;
  readonly writeHeaders: HeaderWriter;
  /** For degraded decisions: the insurance limiter's policies. */
  readonly writeDegradedHeaders: HeaderWriter;
}

/** The limiters of an HTTP limiter: the one for a request, and one for every limit seen lately. */
export interface BoundLimiters<Req> {
  /** The limiter for a request: built now for static policies, on first use for each distinct limit. */
  readonly forRequest: (request: Req) => BoundLimiter | Promise<BoundLimiter>;
  /**
   * For `resetKey`: a limiter for every limit seen, the {@link BOUND_LIMITERS_KEPT} kept and one built
   * anew (and not kept) for each of the last {@link LIMITS_REMEMBERED} limits let go. Read it at once:
   * it is made as it is iterated.
   */
  readonly built: () => Iterable<BoundLimiter>;
  /** How many limiters are kept now: for tests, not API. */
  readonly size: number;
  /** The one limiter of static policies; `undefined` when `limit` is a function of the request. */
  readonly fixed: BoundLimiter | undefined;
}

/**
 * Builds the limiters of an HTTP limiter from its resolved options.
 *
 * @example
 * const limiters = boundLimiters(config, undefined);
 * const { limiter, writeHeaders } = await limiters.forRequest(req);
 */
export function boundLimiters<Req>(
  config: ResolvedRateLimitOptions<Req>,
  onStoreError: OnStoreError | undefined,
): BoundLimiters<Req> {
  const bind = binder(config, onStoreError);
  const { policies, perRequestPolicy } = config;
  if (policies !== undefined) {
    const bound = bind(policies);
    return { forRequest: () => bound, built: () => [bound], size: 1, fixed: bound };
  }
  return perLimit(perRequestPolicy as PerRequestPolicy<Req>, bind);
}

/** Builds a limiter and its header writers for some policies, with the HTTP limiter's settings. */
function binder<Req>(
  config: ResolvedRateLimitOptions<Req>,
  onStoreError: OnStoreError | undefined,
): (policies: readonly ResolvedPolicy[]) => BoundLimiter {
  const writerFor = (policies: Limiter['policies']) =>
    createHeaderWriter(config.headers, config.legacyHeaders, policies);
  const headerWriter = (policies: Limiter['policies']) =>
    withSwitches(
      settings.overrides ? followingOverrides(writerFor, policies) : writerFor(policies),
      config.addHeadersOnExceeding,
      config.addHeaders,
    );
  const settings = { ...config.limiterSettings, onStoreError: onStoreError ?? 'insurance' };
  return function bind(policies) {
    // `limit: 0` has nothing to count: it refuses every request without asking the store.
    const zero = policies.length === 1 && policies[0]?.limit === 0 ? policies[0] : undefined;
    const limiter = zero
      ? zeroLimiter(zero, settings.store.clock, settings.namespace)
      : limiterFrom(limiterConfigOf(policies, settings));
    const writeHeaders = headerWriter(limiter.policies);
    // A degraded decision is the insurance's: its headers advertise the insurance's own quota.
    const sameQuota = limiter.insurancePolicies.every(
      (p, i) => p.limit === limiter.policies[i]?.limit && p.capacity === limiter.policies[i]?.capacity,
    );
    const writeDegradedHeaders = sameQuota ? writeHeaders : headerWriter(limiter.insurancePolicies);
    return { limiter, writeHeaders, writeDegradedHeaders };
  };
}

/** A kept limiter, and whether a request used it since the eviction scan last passed it. */
interface Kept {
  readonly bound: BoundLimiter;
  used: boolean;
}

/**
 * One limiter per distinct limit, at most {@link BOUND_LIMITERS_KEPT}, the least recently used let go
 * first. Second chance rather than strict LRU: a hit only sets a flag, where moving the entry to the back
 * of the map on every hit (a delete and a set) would cost every request many times that.
 *
 * Letting a limiter go loses no count. Buckets and ban counts live in the store under the namespace,
 * the identity and the policy set, so the limiter rebuilt for the same limit (same namespace, same
 * policies) finds them as they were. The deny cache only answers what the store would: without it the
 * next check asks the store. A request decided before the limiter was let go keeps it, so its refund
 * goes where its charge was made. What is lost is the insurance limiter's buckets, held in this process:
 * during a store outage a client whose limit was let go starts with a full insurance bucket, as after a
 * restart — only when more than a thousand limits are in use during the outage.
 */
function perLimit<Req>(
  { limitOf, policyFor }: PerRequestPolicy<Req>,
  bind: (policies: readonly ResolvedPolicy[]) => BoundLimiter,
): BoundLimiters<Req> {
  // In the order they were built or given their second chance: the scan for one to let go starts first.
  const kept = new Map<number, Kept>();
  // Limits let go, the longest ago first: what a reset must still reach.
  const letGo = new Set<number>();

  function letOneGo(): void {
    for (const [limit, entry] of kept) {
      kept.delete(limit);
      if (!entry.used) {
        letGo.add(limit);
        if (letGo.size > LIMITS_REMEMBERED) letGo.delete(letGo.values().next().value as number);
        return;
      }
      // Used since the scan last passed: it goes to the back (the scan reaches it again, unused, last).
      entry.used = false;
      kept.set(limit, entry);
    }
  }

  return {
    async forRequest(request) {
      const limit = await limitOf(request);
      const entry = kept.get(limit);
      if (entry !== undefined) {
        entry.used = true;
        return entry.bound;
      }
      if (kept.size >= BOUND_LIMITERS_KEPT) letOneGo();
      const bound = bind(policyFor(limit));
      letGo.delete(limit);
      kept.set(limit, { bound, used: false });
      return bound;
    },
    *built() {
      for (const { bound } of kept.values()) yield bound;
      // Built for the reset and not kept, so a reset pushes out no limiter that requests are using.
      for (const limit of letGo) yield bind(policyFor(limit));
    },
    get size() {
      return kept.size;
    },
    fixed: undefined,
  };
}

/**
 * The {@link KeyControls} of an HTTP limiter's limiters; `adapter` names it in errors.
 *
 * @example
 * Object.assign(middleware, keyControlsOf(limiters, '@tollgate/express'));
 */
export function keyControlsOf<Req>(limiters: BoundLimiters<Req>, adapter: string): KeyControls {
  const fixed = () => {
    if (limiters.fixed !== undefined) return limiters.fixed.limiter;
    throw new TollgateOptionError(
      `${adapter}: overrides need static policies; with a limit function, return the client's limit from it`,
    );
  };
  return {
    async resetKey(key) {
      await Promise.all(Array.from(limiters.built(), ({ limiter }) => limiter.reset(key)));
    },
    setOverride: async (key, limits, options) => fixed().setOverride(key, limits, options),
    removeOverride: async (key) => fixed().removeOverride(key),
    getOverride: async (key) => fixed().getOverride(key),
  };
}
