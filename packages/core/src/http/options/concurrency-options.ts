/**
 * `concurrencyLimit`'s options, checked once at construction: those it shares with `rateLimit` by the
 * option table's own checks, so a `statusCode` or a `store` means and is refused the same in both.
 */
import type { InsuranceOptions } from '../../limiter/limiter-options.js';
import type { Store } from '../../model/store.js';
import { parseDuration } from '../../support/duration.js';
import { TollgateOptionError } from '../../support/option-error.js';
import {
  isSettingsObject,
  ownOptions,
  positiveWholeNumber,
  rejectUnknownNames,
} from '../../support/value-checks.js';
import type { Logger } from '../../support/warnings.js';
import type { KeyFunction } from '../identity/request-keys.js';
import { OPTION_TABLE } from './option-table.js';
import type { AdapterSettings, ConcurrencyLimitOptions, StoreFailureAnswer } from './option-types.js';

/** The options `concurrencyLimit` shares with `rateLimit`, checked by the option table. */
const SHARED = [
  'store',
  'key',
  'name',
  'timeout',
  'onStoreError',
  'insurance',
  'skip',
  'statusCode',
  'logger',
] as const satisfies readonly (keyof ConcurrencyLimitOptions<unknown>)[];

const NAMES = [
  'limit',
  'leaseTtl',
  ...SHARED,
] as const satisfies readonly (keyof ConcurrencyLimitOptions<unknown>)[];

/** `concurrencyLimit`'s options, checked, with their defaults. */
export interface ResolvedConcurrencyOptions<Req> {
  readonly limit: number;
  readonly store: Store;
  readonly key: KeyFunction<Req>;
  /** The given name, else `'concurrency-'` and the limit. */
  readonly name: string;
  readonly leaseTtlMs: number;
  /** `undefined` for no limit (`timeout: false`). */
  readonly timeoutMs: number | undefined;
  readonly onStoreError: StoreFailureAnswer;
  readonly insurance: InsuranceOptions | undefined;
  readonly skip: ((request: Req) => boolean | Promise<boolean>) | undefined;
  readonly statusCode: number;
  readonly logger: Logger;
}

/**
 * Checks `concurrencyLimit`'s options (own properties only) and applies their defaults. Throws a
 * `TypeError` that starts with the adapter and names the option.
 *
 * @example
 * const options = resolveConcurrencyOptions({ limit: 2 }, { adapter: '@tollgate/express' });
 * options.leaseTtlMs; // 60000
 */
export function resolveConcurrencyOptions<Req>(
  given: ConcurrencyLimitOptions<Req>,
  settings: AdapterSettings,
): ResolvedConcurrencyOptions<Req> {
  const where = settings.adapter;
  const options = ownOptions(given);
  if (!isSettingsObject(options))
    throw new TollgateOptionError(`${where}: concurrencyLimit needs options like { limit: 2 }`);
  rejectUnknownNames(options, NAMES, new Map(), `${where}: unknown concurrencyLimit option`);
  const shared = <Name extends (typeof SHARED)[number]>(name: Name) =>
    OPTION_TABLE[name].check(options[name], { what: `${where}: ${name}`, settings }) as ReturnType<
      (typeof OPTION_TABLE)[Name]['check']
    >;
  const limit = positiveWholeNumber(options.limit, `${where}: limit`);
  const onStoreError = shared('onStoreError') ?? 'insurance';
  if (typeof onStoreError === 'function') {
    // A lease's fallback is chosen when the limiter is made, not per request.
    throw new TollgateOptionError(
      `${where}: onStoreError must be 'insurance', 'allow' or 'deny' for concurrencyLimit`,
    );
  }
  return {
    limit,
    store: shared('store'),
    key: shared('key') as KeyFunction<Req>,
    name: shared('name') ?? `concurrency-${limit}`,
    leaseTtlMs: parseDuration(options.leaseTtl ?? '1m', `${where}: leaseTtl`),
    timeoutMs: shared('timeout'),
    onStoreError,
    insurance: shared('insurance'),
    skip: shared('skip') as ResolvedConcurrencyOptions<Req>['skip'],
    statusCode: shared('statusCode'),
    logger: shared('logger'),
  };
}
