/**
 * Concurrency limits for HTTP requests, the part every adapter shares: at most `limit` requests of one
 * client in progress at once. A request takes a lease when it arrives and the adapter releases it when
 * the response is done or the client goes away.
 */
import { type ConcurrencyLimiter, createConcurrencyLimiter } from '../../limiter/concurrency-limiter.js';
import { TollgateOptionError } from '../../support/option-error.js';
import { StoreUnavailableError } from '../../support/store-error.js';
import { Warnings } from '../../support/warnings.js';
import type { ConcurrencyOutcome } from '../answer/outcome.js';
import { PROBLEM_JSON, QUOTA_EXCEEDED_TYPE } from '../answer/problem.js';
import { rejectionOf } from '../answer/rejections.js';
import { requestIdentity } from '../identity/request-identity.js';
import type { RequestAccess } from '../identity/request-keys.js';
import {
  type ResolvedConcurrencyOptions,
  resolveConcurrencyOptions,
} from '../options/concurrency-options.js';
import type { AdapterSettings, ConcurrencyLimitOptions } from '../options/option-types.js';

/** A concurrency limiter for HTTP requests of one framework. */
export interface HttpConcurrencyLimiter<Req> {
  readonly limit: number;
  check(request: Req): Promise<ConcurrencyOutcome>;
}

const SKIPPED: ConcurrencyOutcome = Object.freeze({ kind: 'skipped' });

/**
 * Builds an adapter's concurrency limiter; bad options throw here.
 *
 * @example
 * const limiter = createHttpConcurrencyLimiter({ limit: 2 }, expressAccess, { adapter: '@tollgate/express' });
 * const outcome = await limiter.check(req);
 * if (outcome.kind === 'acquired') res.once('close', outcome.release);
 */
export function createHttpConcurrencyLimiter<Req>(
  given: ConcurrencyLimitOptions<Req>,
  access: RequestAccess<Req>,
  settings: AdapterSettings,
): HttpConcurrencyLimiter<Req> {
  const options = resolveConcurrencyOptions(given, settings);
  const { key, skip, statusCode, logger, onStoreError: answer } = options;
  const where = settings.adapter;
  const limiter = buildLimiter(options, where);
  const warnings = new Warnings(logger, true);
  const body = JSON.stringify({
    type: QUOTA_EXCEEDED_TYPE,
    title: 'Request cannot be satisfied as assigned quota has been exceeded',
    status: statusCode,
    detail: `Too many requests in progress: at most ${limiter.limit} at once.`,
    'violated-policies': [`${limiter.limit}-at-once`],
  });
  const limited: ConcurrencyOutcome = Object.freeze({
    kind: 'limited',
    ...rejectionOf(statusCode, PROBLEM_JSON, body),
  });

  const identityOf = requestIdentity(key, access, warnings, settings);

  return {
    limit: limiter.limit,
    async check(request) {
      if (skip && (await skip(request))) return SKIPPED;
      const keyed = identityOf(request);
      const identity = typeof keyed === 'string' ? keyed : await keyed;
      let decision: Awaited<ReturnType<ConcurrencyLimiter['acquire']>>;
      try {
        decision = await limiter.acquire(identity);
      } catch (error) {
        if (error instanceof TypeError || error instanceof RangeError) throw error;
        if (!(error instanceof StoreUnavailableError && error.reported)) warnings.storeError(error, answer);
        return answer === 'allow' ? SKIPPED : { kind: 'error', error };
      }
      const { lease } = decision;
      if (lease === undefined) return limited;
      // A lease that cannot be released (the store is down) expires after its time to live.
      return {
        kind: 'acquired',
        release: () => lease.release().catch((error) => warnings.storeError(error, answer)),
      };
    },
  };
}

function buildLimiter<Req>(options: ResolvedConcurrencyOptions<Req>, where: string): ConcurrencyLimiter {
  try {
    return createConcurrencyLimiter({
      limit: options.limit,
      namespace: options.name,
      onStoreError: options.onStoreError === 'insurance' ? 'insurance' : 'throw',
      store: options.store,
      leaseTtl: options.leaseTtlMs,
      timeout: options.timeoutMs ?? false,
      ...(options.insurance ? { insurance: options.insurance } : {}),
    });
  } catch (error) {
    // The same checks, said to come from the adapter: the app called it, not createConcurrencyLimiter.
    const message = (error as Error).message.replace(/^createConcurrencyLimiter: /, '');
    throw new TollgateOptionError(`${where}: ${message}`);
  }
}
