/**
 * Concurrency limits for HTTP requests, the part every adapter shares: at most `limit` requests of one
 * client in progress at once. A request takes a lease when it arrives and the adapter releases it when
 * the response is done or the client goes away.
 */
import { type ConcurrencyLimiter, createConcurrencyLimiter } from '../../limiter/concurrency-limiter.js';
import type { InsuranceOptions } from '../../limiter/insurance.js';
import type { Store } from '../../model/store.js';
import type { Duration } from '../../support/duration.js';
import { StoreUnavailableError } from '../../support/store-error.js';
import { rejectUnknownNames } from '../../support/unknown-names.js';
import { isSettingsObject, ownOptions } from '../../support/value-checks.js';
import { type Logger, Warnings } from '../../support/warnings.js';
import type { ConcurrencyOutcome } from '../answer/outcome.js';
import { PROBLEM_JSON, QUOTA_EXCEEDED_TYPE } from '../answer/problem.js';
import { rejectionOf } from '../answer/rejections.js';
import { requestIdentity } from '../identity/request-identity.js';
import { byIp, type KeyFunction, type RequestAccess } from '../identity/request-keys.js';
import type { AdapterSettings, StoreFailureAnswer } from '../options/option-types.js';

/** Options of the adapters' `concurrencyLimit`. */
export interface ConcurrencyLimitOptions<Req> {
  /** The most requests of one client in progress at once. A positive whole number. */
  limit: number;
  /** Where leases live. Default: a `MemoryStore` of this limiter's own; share a `RedisStore` across servers. */
  store?: Store;
  /** Who is limited. Default: `byIp()`. */
  key?: KeyFunction<Req>;
  /** This limiter's namespace in the store. Default: `'concurrency'` and the limit, e.g. `'concurrency-2'`. */
  name?: string;
  /** How long a lease lives if its response never ends (a crashed process). Default: `'1m'`. */
  leaseTtl?: Duration;
  /** How long an acquire waits for a store that gives no answer. Default: `'1s'`. */
  timeout?: Duration | false;
  /** When the store fails: `'insurance'` (default), `'allow'` or `'deny'`, as for `rateLimit`. */
  onStoreError?: StoreFailureAnswer;
  /** The insurance limiter: `instances` divides the limit among that many app servers. */
  insurance?: InsuranceOptions;
  /** Requests for which this returns true are not limited. */
  skip?: (request: Req) => boolean | Promise<boolean>;
  /** The status of a refused request. Default: `429`. */
  statusCode?: number;
  /** Where lease failures are logged. Default: `console`. */
  logger?: Logger;
}

/** A concurrency limiter for HTTP requests of one framework. */
export interface HttpConcurrencyLimiter<Req> {
  readonly limit: number;
  check(request: Req): Promise<ConcurrencyOutcome>;
}

const OPTION_NAMES = [
  'limit',
  'store',
  'key',
  'name',
  'leaseTtl',
  'timeout',
  'onStoreError',
  'insurance',
  'skip',
  'statusCode',
  'logger',
] as const satisfies readonly (keyof ConcurrencyLimitOptions<unknown>)[];

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
  const where = settings.adapter;
  const options = ownOptions(given);
  if (!isSettingsObject(options))
    throw new TypeError(`${where}: concurrencyLimit needs options like { limit: 2 }`);
  rejectUnknownNames(options, OPTION_NAMES, new Map(), `${where}: unknown concurrencyLimit option`);
  const { key = byIp<Req>(), skip, statusCode = 429, logger = settings.logger ?? console } = options;
  const answer = options.onStoreError ?? 'insurance';
  checkFunctions(where, { key, skip });
  if (!['insurance', 'allow', 'deny'].includes(answer)) {
    throw new TypeError(
      `${where}: onStoreError must be 'insurance', 'allow' or 'deny'; got ${String(answer)}`,
    );
  }
  if (!Number.isInteger(statusCode) || statusCode < 400 || statusCode > 599) {
    throw new TypeError(
      `${where}: statusCode must be a whole number from 400 to 599; got ${String(statusCode)}`,
    );
  }
  const limiter = buildLimiter(options, answer, where);
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

  const identityOf = requestIdentity(key, access, warnings, where);

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
        release: () => void lease.release().catch((error) => warnings.storeError(error, answer)),
      };
    },
  };
}

function buildLimiter<Req>(
  options: ConcurrencyLimitOptions<Req>,
  answer: StoreFailureAnswer,
  where: string,
): ConcurrencyLimiter {
  try {
    return createConcurrencyLimiter({
      limit: options.limit,
      namespace: options.name ?? `concurrency-${String(options.limit)}`,
      onStoreError: answer === 'insurance' ? 'insurance' : 'throw',
      ...(options.store ? { store: options.store } : {}),
      ...(options.leaseTtl !== undefined ? { leaseTtl: options.leaseTtl } : {}),
      ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
      ...(options.insurance ? { insurance: options.insurance } : {}),
    });
  } catch (error) {
    throw new TypeError(`${where}: ${(error as Error).message}`);
  }
}

function checkFunctions(where: string, functions: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(functions)) {
    if (value !== undefined && typeof value !== 'function')
      throw new TypeError(`${where}: ${name} must be a function`);
  }
}
