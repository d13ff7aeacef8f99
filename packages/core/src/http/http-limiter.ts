/**
 * The HTTP-shaped core every adapter calls: from a request to an outcome (key, cost, decision, headers),
 * and from a limited request to its 429 answer. Adapters add only the framework's reading and writing.
 */
import type { Decision } from '../decision.js';
import { createLimiter, type Limiter, type OnStoreError, type StoreErrorAction } from '../limiter.js';
import type { Policy } from '../policy.js';
import { StoreUnavailableError } from '../store-error.js';
import { DEFAULT_IPV6_SUBNET, ipIdentity } from './client-ip.js';
import { createHeaderWriter, type HeaderWriter } from './headers.js';
import {
  type AdapterSettings,
  type RateLimitOptions,
  type ResolvedRateLimitOptions,
  resolveRateLimitOptions,
  type StoreFailureAnswer,
} from './options.js';
import type { RateLimitInfo, RateLimitOutcome, RateLimitRejection } from './outcome.js';
import { PROBLEM_JSON, problemDetails, refusalStatus } from './problem.js';
import { RateLimitError } from './rate-limit-error.js';
import type { RequestAccess } from './request-keys.js';
import { Warnings } from './warnings.js';
import { isZeroLimit, resolveZeroLimit, zeroLimiter } from './zero-limit.js';

/** A rate limiter for HTTP requests of one framework. Build once per middleware or route. */
export interface HttpLimiter<Req> {
  /** The limiter's name: its namespace in the store. */
  readonly name: string;
  /** Decides a request: skip, allow or limit, with the headers to send. Charges the store once per call. */
  check(request: Req): Promise<RateLimitOutcome>;
  /**
   * The answer to a limited request: 429, or 403 when its cost exceeds a capacity; the body is the
   * `message` option, else RFC 9457 problem details.
   */
  rejection(request: Req, info: RateLimitInfo): Promise<RateLimitRejection>;
}

/** A limiter with the header writer for its policies, built together once. */
interface BoundLimiter {
  readonly limiter: Limiter;
  readonly writeHeaders: HeaderWriter;
  /** For degraded decisions: the insurance limiter's policies. */
  readonly writeDegradedHeaders: HeaderWriter;
}

const SKIPPED: RateLimitOutcome = Object.freeze({ kind: 'skipped' });

/** The identity of requests with neither a key nor a client IP: they share one bucket rather than none. */
const UNKNOWN_IDENTITY = 'unknown';

/**
 * Builds an adapter's limiter from the user's options; bad options throw here.
 *
 * @example
 * // inside an adapter
 * const limiter = createHttpLimiter(options, expressAccess, { adapter: '@tollgate/express' });
 * const outcome = await limiter.check(req);
 */
export function createHttpLimiter<Req>(
  options: RateLimitOptions<Req>,
  access: RequestAccess<Req>,
  settings: AdapterSettings,
): HttpLimiter<Req> {
  const config = resolveRateLimitOptions(options, settings);
  const warnings = new Warnings(config.logger, config.warnings);
  const staticAnswer = typeof config.onStoreError === 'function' ? undefined : config.onStoreError;
  const answerOf = typeof config.onStoreError === 'function' ? config.onStoreError : undefined;

  /** Logs a store failure (unless the store reported it already) and tells the core what to do. */
  function failed(error: unknown, answer: StoreFailureAnswer): StoreErrorAction {
    if (!(error instanceof StoreUnavailableError && error.reported)) warnings.storeError(error, answer);
    return answer === 'insurance' ? 'insurance' : 'throw';
  }

  const limiterFor = boundLimiters(config, staticAnswer && ((error) => failed(error, staticAnswer)));
  let proxyWarningDue = true;

  async function keyOf(request: Req): Promise<string> {
    const identity: unknown = await config.key(request, access);
    if (typeof identity === 'string' && identity !== '') return identity;
    if (identity !== undefined && identity !== '') {
      // An app bug (e.g. a numeric user id), not a store failure: it must not let requests through unlimited.
      throw new TypeError(
        `${settings.adapter}: the key function must return a string or undefined; got ${typeof identity}`,
      );
    }
    // Falling back to the IP keeps one anonymous client from exhausting a bucket that all of them share.
    const ip = ipIdentity(access.ip(request), DEFAULT_IPV6_SUBNET);
    if (ip === undefined) {
      warnings.once(
        'TOLLGATE_MISSING_IP',
        'the framework gave no valid client IP; such requests share one bucket',
      );
      return UNKNOWN_IDENTITY;
    }
    warnings.once(
      'TOLLGATE_MISSING_KEY',
      'the key function returned nothing; such requests are limited by client IP',
    );
    return ip;
  }

  /** Warns once if X-Forwarded-For arrives but the framework ignored it (no trusted proxy). */
  function checkProxySetup(request: Req): void {
    const forwardedFor = access.header(request, 'x-forwarded-for');
    const ip = access.ip(request);
    if (forwardedFor === undefined || ip !== access.socketIp(request)) return;
    // A client on the proxy's own address (a local setup) forwards the very address the socket shows:
    // the framework may well trust the proxy, so there is nothing to warn about.
    const clientIp = ipIdentity(ip, false);
    if (forwardedFor.split(',').some((hop) => ipIdentity(hop.trim(), false) === clientIp)) return;
    proxyWarningDue = false;
    warnings.once(
      'TOLLGATE_UNTRUSTED_FORWARDED_FOR',
      'X-Forwarded-For arrived but the app does not trust proxies, so every client behind a proxy shares one ' +
        "bucket. If the app is behind a proxy, set Express 'trust proxy', Fastify trustProxy or Koa app.proxy.",
    );
  }

  return {
    name: config.name,

    async check(request) {
      if (config.skip && (await config.skip(request))) return SKIPPED;
      if (proxyWarningDue) checkProxySetup(request);
      const identity = await keyOf(request);
      // A static cost was checked at construction; a computed one is checked here, so a bad one is
      // reported as the app's bug rather than caught below as a store failure.
      const cost =
        typeof config.cost === 'function'
          ? checkedCost(await config.cost(request), settings.adapter)
          : config.cost;
      const bound = await limiterFor(request);
      let decision: Decision;
      let chosen: StoreFailureAnswer | undefined;
      try {
        decision = await bound.limiter.consume(
          identity,
          answerOf === undefined
            ? { cost }
            : {
                cost,
                onStoreError: async (error) => {
                  chosen = storeFailureAnswer(await answerOf(error, request), settings.adapter);
                  return failed(error, chosen);
                },
              },
        );
      } catch (error) {
        // The store failed and the answer is to pass or to fail; anything else is the app's error.
        const answer = chosen ?? staticAnswer;
        if (answer !== 'allow' && answer !== 'deny') throw error;
        return answer === 'allow' ? SKIPPED : { kind: 'error', headers: {}, error };
      }
      const info: RateLimitInfo = { limiter: config.name, decision };
      const headers = (decision.degraded ? bound.writeDegradedHeaders : bound.writeHeaders)(decision);
      const profile = config.headers;
      if (decision.allowed) return { kind: 'allowed', headers, profile, info };
      if (config.throwOnLimit)
        return { kind: 'error', headers, profile, error: new RateLimitError(headers, info) };
      return { kind: 'limited', headers, profile, info };
    },

    async rejection(request, info) {
      const status = refusalStatus(info.decision);
      const message =
        typeof config.message === 'function' ? await config.message(request, info) : config.message;
      if (typeof message === 'string')
        return { status, contentType: 'text/plain; charset=utf-8', body: message };
      if (message !== undefined)
        return { status, contentType: 'application/json; charset=utf-8', body: JSON.stringify(message) };
      return { status, contentType: PROBLEM_JSON, body: JSON.stringify(problemDetails(info.decision)) };
    },
  };
}

/**
 * The limiter for a request: one, built now, for static policies; for `limit` as a function, one per
 * distinct limit, built on first use and kept (plans are few).
 */
function boundLimiters<Req>(
  config: ResolvedRateLimitOptions<Req>,
  onStoreError: OnStoreError | undefined,
): (request: Req) => BoundLimiter | Promise<BoundLimiter> {
  const bind = (policies: Policy | readonly Policy[]): BoundLimiter => {
    // `limit: 0` has nothing to count: it refuses every request without asking the store. (Its window
    // and burst were checked when the options were.)
    const limiter = isZeroLimit(policies)
      ? zeroLimiter(resolveZeroLimit(policies, ''), config.store.clock)
      : createLimiter({
          store: config.store,
          policies,
          namespace: config.name,
          timeout: config.timeoutMs ?? false,
          ...(onStoreError ? { onStoreError } : {}),
          ...(config.insurance ? { insurance: config.insurance } : {}),
          ...(config.denyCache !== undefined ? { denyCache: config.denyCache } : {}),
        });
    const writeHeaders = createHeaderWriter(config.headers, config.legacyHeaders, limiter.policies);
    // A degraded decision is the insurance's: its headers advertise the insurance's own quota.
    const sameQuota = limiter.insurancePolicies.every(
      (p, i) => p.limit === limiter.policies[i]?.limit && p.capacity === limiter.policies[i]?.capacity,
    );
    const writeDegradedHeaders = sameQuota
      ? writeHeaders
      : createHeaderWriter(config.headers, config.legacyHeaders, limiter.insurancePolicies);
    return { limiter, writeHeaders, writeDegradedHeaders };
  };
  const { policies, policyOf } = config;
  if (policies !== undefined) {
    const bound = bind(policies);
    return () => bound;
  }
  const byLimit = new Map<number, BoundLimiter>();
  return async (request) => {
    const policy = await (policyOf as NonNullable<typeof policyOf>)(request);
    let bound = byLimit.get(policy.limit);
    if (bound === undefined) {
      bound = bind(policy);
      byLimit.set(policy.limit, bound);
    }
    return bound;
  };
}

/** What the app's `onStoreError` function answered, checked. */
function storeFailureAnswer(answer: unknown, adapter: string): StoreFailureAnswer {
  if (answer === 'insurance' || answer === 'allow' || answer === 'deny') return answer;
  throw new TypeError(
    `${adapter}: the onStoreError function must return 'insurance', 'allow' or 'deny'; got ${String(answer)}`,
  );
}

function checkedCost(cost: unknown, adapter: string): number {
  if (typeof cost !== 'number' || !Number.isFinite(cost) || cost <= 0) {
    throw new TypeError(`${adapter}: the cost function must return a positive number; got ${String(cost)}`);
  }
  return cost;
}
