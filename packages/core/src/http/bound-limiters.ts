/**
 * The core limiters behind an HTTP limiter, each with the header writers for its policies: one for
 * static policies, one per distinct limit when `limit` is a function of the request.
 */
import { createLimiter, type Limiter, type OnStoreError } from '../limiter.js';
import type { Policy } from '../policy.js';
import { withSwitches } from './header-switches.js';
import { createHeaderWriter, type HeaderWriter } from './headers.js';
import type { ResolvedRateLimitOptions } from './options.js';
import { isZeroLimit, resolveZeroLimit, zeroLimiter } from './zero-limit.js';

/** A limiter with the header writers for its policies, built together once. */
export interface BoundLimiter {
  readonly limiter: Limiter;
  readonly writeHeaders: HeaderWriter;
  /** For degraded decisions: the insurance limiter's policies. */
  readonly writeDegradedHeaders: HeaderWriter;
}

/** The limiters of an HTTP limiter: the one for a request, and every one built so far. */
export interface BoundLimiters<Req> {
  /** The limiter for a request: built now for static policies, on first use for each distinct limit. */
  readonly forRequest: (request: Req) => BoundLimiter | Promise<BoundLimiter>;
  /** Every limiter built so far: one, or one per limit seen (plans are few). */
  readonly built: () => Iterable<BoundLimiter>;
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
  const headerWriter = (policies: Limiter['policies']) =>
    withSwitches(
      createHeaderWriter(config.headers, config.legacyHeaders, policies),
      config.addHeadersOnExceeding,
      config.addHeaders,
    );
  const bind = (policies: Policy | readonly Policy[]): BoundLimiter => {
    // `limit: 0` has nothing to count: it refuses every request without asking the store. (Its window
    // and burst were checked when the options were.)
    const limiter = isZeroLimit(policies)
      ? zeroLimiter(resolveZeroLimit(policies, ''), config.store.clock, config.name)
      : createLimiter({
          store: config.store,
          policies,
          namespace: config.name,
          timeout: config.timeoutMs ?? false,
          ...(onStoreError ? { onStoreError } : {}),
          ...(config.insurance ? { insurance: config.insurance } : {}),
          ...(config.denyCache !== undefined ? { denyCache: config.denyCache } : {}),
          ...(config.ban ? { ban: config.ban } : {}),
        });
    const writeHeaders = headerWriter(limiter.policies);
    // A degraded decision is the insurance's: its headers advertise the insurance's own quota.
    const sameQuota = limiter.insurancePolicies.every(
      (p, i) => p.limit === limiter.policies[i]?.limit && p.capacity === limiter.policies[i]?.capacity,
    );
    const writeDegradedHeaders = sameQuota ? writeHeaders : headerWriter(limiter.insurancePolicies);
    return { limiter, writeHeaders, writeDegradedHeaders };
  };
  const { policies, policyOf } = config;
  if (policies !== undefined) {
    const bound = bind(policies);
    return { forRequest: () => bound, built: () => [bound] };
  }
  const byLimit = new Map<number, BoundLimiter>();
  return {
    async forRequest(request) {
      const policy = await (policyOf as NonNullable<typeof policyOf>)(request);
      let bound = byLimit.get(policy.limit);
      if (bound === undefined) {
        bound = bind(policy);
        byLimit.set(policy.limit, bound);
      }
      return bound;
    },
    built: () => byLimit.values(),
  };
}
