/** The options of the cost limit, the types, and their validation: bad options throw where the limit is made. */
import {
  createLimiter,
  type Duration,
  type HeaderProfile,
  type InsuranceOptions,
  type Limiter,
  type Logger,
  type Policy,
  type Store,
  TollgateOptionError,
} from '@tollgate/core';
import { type CostRules, DEFAULT_COST_RULES } from './cost/rules.js';

/** Who prints what the limit reports: a settle that failed, a store that failed. Default: `console`. */
export type { Logger };

/**
 * How an operation's cost is counted. Each value a field returns costs its weight (its `@cost`, else
 * its type's, else `objectWeight` for objects and `scalarWeight` for scalars and enums) plus what its
 * selections cost; a list multiplies by its size.
 */
export interface CostOptions {
  /** What every operation costs on top of its fields, so that none is free: a number above 0. Default: `1`. */
  baseCost?: number;
  /** What each object (of an object, interface or union type) costs without a `@cost`. Default: `1`. */
  objectWeight?: number;
  /** What each scalar or enum value costs without a `@cost`. Default: `0`. */
  scalarWeight?: number;
  /**
   * The size of a list that no argument sizes: no slicing argument given, no `@listSize(assumedSize:)`.
   * A whole number, 0 or more. Default: `10`.
   */
  defaultListSize?: number;
  /**
   * Arguments whose value is a list field's size, for fields without `@listSize`: the largest one given
   * (defaults in the schema included). On a field that returns an object (a connection), they size its
   * `connectionFields` instead. Default: `['first', 'last', 'limit']`.
   */
  listArguments?: readonly string[];
  /** The list fields of a connection, sized by their parent's `listArguments`. Default: `['edges', 'nodes']`. */
  connectionFields?: readonly string[];
}

/** What the server's context is keyed by: a function of it, such as the user's id or the client's IP. */
export type KeyOfContext<Context> = (context: Context) => string | Promise<string>;

/** Options of the cost limit, the same for every server. */
export interface CostLimitOptions<Context> extends CostOptions {
  /**
   * Whose budget an operation is charged to, from the server's context: a user id, an API key, an IP.
   * Required. Return a non-empty string; prefix it by what it is (`user:42`, `ip:203.0.113.7`).
   *
   * @example
   * key: (context) => (context.user ? `user:${context.user.id}` : `ip:${context.ip}`)
   */
  key: KeyOfContext<Context>;
  /** Cost points per `window`, for one policy. With `window`; or give `policies`. */
  limit?: number;
  /** The window of `limit`: ms or a string such as `'1m'`. */
  window?: Duration;
  /** Several policies, all charged (or none); instead of `limit` and `window`. */
  policies?: Policy | readonly Policy[];
  /** Where budgets live. Default: a new `MemoryStore` (per process). Use a `RedisStore` to share them. */
  store?: Store;
  /** The limiter's namespace in the store. Default: `'graphql'`. */
  name?: string;
  /** The rate-limit headers sent where the transport is HTTP. Default: `'draft-11'`. `false`: none. */
  headers?: HeaderProfile;
  /** Also send `X-RateLimit-Limit`, `-Remaining` and `-Reset`. Default: `false`. */
  legacyHeaders?: boolean;
  /**
   * Count and report, but refuse nothing: an operation that would be refused runs (uncharged), with
   * its `extensions.cost`. A function decides per operation. Default: `false`.
   */
  dryRun?: boolean | ((context: Context) => boolean | Promise<boolean>);
  /**
   * When the store fails: `'insurance'` (a per-process limiter decides, as the core does), `'allow'`
   * (run uncharged) or `'deny'` (refuse, `TOLLGATE_STORE_UNAVAILABLE`, HTTP 503). Default: `'insurance'`.
   */
  onStoreError?: 'insurance' | 'allow' | 'deny';
  /** How long to wait for the store. Default: `'1s'`. */
  timeout?: Duration | false;
  /** The insurance limiter's settings (see `@tollgate/core`). Default: `{ instances: 1 }`. */
  insurance?: InsuranceOptions;
  /** Where failures are logged. Default: `console`. */
  logger?: Logger;
}

/** The options, checked and resolved. */
export interface ResolvedCostLimit<Context> {
  readonly limiter: Limiter;
  readonly rules: CostRules;
  readonly key: KeyOfContext<Context>;
  readonly headers: HeaderProfile;
  readonly legacyHeaders: boolean;
  readonly dryRun: boolean | ((context: Context) => boolean | Promise<boolean>);
  readonly onStoreError: 'insurance' | 'allow' | 'deny';
  readonly logger: Logger;
}

const SOURCE = '@tollgate/graphql';

const KNOWN_OPTIONS = new Set([
  'key',
  'limit',
  'window',
  'policies',
  'store',
  'name',
  'headers',
  'legacyHeaders',
  'dryRun',
  'onStoreError',
  'timeout',
  'insurance',
  'logger',
  'baseCost',
  'objectWeight',
  'scalarWeight',
  'defaultListSize',
  'listArguments',
  'connectionFields',
]);

const HEADER_PROFILES: readonly unknown[] = ['draft-11', 'draft-10', 'draft-7', 'draft-6', false];
const STORE_ERROR_ANSWERS: readonly unknown[] = ['insurance', 'allow', 'deny'];

/**
 * `options`, checked: anything the limit does not take throws a `TollgateOptionError` naming it.
 *
 * @example
 * const resolved = resolveCostLimitOptions({ key: (context) => context.userId, limit: 1000, window: '1m' });
 */
export function resolveCostLimitOptions<Context>(
  options: CostLimitOptions<Context>,
): ResolvedCostLimit<Context> {
  if (typeof options !== 'object' || options === null) {
    throw optionError('needs options, at least { key, limit, window }');
  }
  for (const name of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(name)) throw optionError(`has no option '${name}'`);
  }
  const { key, dryRun, headers = 'draft-11', legacyHeaders = false, onStoreError = 'insurance' } = options;
  if (typeof key !== 'function') {
    throw optionError('key must be a function of the context, such as (context) => context.userId');
  }
  if (dryRun !== undefined && typeof dryRun !== 'boolean' && typeof dryRun !== 'function') {
    throw optionError(`dryRun must be true, false or a function; got ${String(dryRun)}`);
  }
  if (!HEADER_PROFILES.includes(headers)) {
    throw optionError(
      `headers must be 'draft-11', 'draft-10', 'draft-7', 'draft-6' or false; got ${String(headers)}`,
    );
  }
  if (typeof legacyHeaders !== 'boolean') throw optionError('legacyHeaders must be true or false');
  if (!STORE_ERROR_ANSWERS.includes(onStoreError)) {
    throw optionError(`onStoreError must be 'insurance', 'allow' or 'deny'; got ${String(onStoreError)}`);
  }
  const logger = options.logger ?? console;
  if (typeof logger?.error !== 'function' || typeof logger.warn !== 'function') {
    throw optionError('logger must have warn and error methods');
  }
  return {
    limiter: limiterOf(options, onStoreError),
    rules: resolveCostRules(options),
    key,
    headers,
    legacyHeaders,
    dryRun: dryRun ?? false,
    onStoreError,
    logger,
  };
}

/**
 * The cost rules of `options` (defaults for those not given), checked.
 *
 * @example
 * resolveCostRules({ defaultListSize: 50 }).listArguments; // ['first', 'last', 'limit']
 */
export function resolveCostRules(options: CostOptions): CostRules {
  const rules = {
    baseCost: numberOption(options.baseCost, 'baseCost', DEFAULT_COST_RULES.baseCost, 'a number above 0'),
    objectWeight: numberOption(options.objectWeight, 'objectWeight', DEFAULT_COST_RULES.objectWeight),
    scalarWeight: numberOption(options.scalarWeight, 'scalarWeight', DEFAULT_COST_RULES.scalarWeight),
    defaultListSize: numberOption(
      options.defaultListSize,
      'defaultListSize',
      DEFAULT_COST_RULES.defaultListSize,
      'a whole number, 0 or more',
    ),
    listArguments: namesOption(options.listArguments, 'listArguments', DEFAULT_COST_RULES.listArguments),
    connectionFields: namesOption(
      options.connectionFields,
      'connectionFields',
      DEFAULT_COST_RULES.connectionFields,
    ),
  };
  if (rules.baseCost === 0) throw optionError('baseCost must be a number above 0; got 0');
  if (!Number.isInteger(rules.defaultListSize)) {
    throw optionError(`defaultListSize must be a whole number, 0 or more; got ${rules.defaultListSize}`);
  }
  return Object.freeze(rules);
}

function limiterOf(options: CostLimitOptions<never>, onStoreError: string): Limiter {
  const { limit, window, policies, store, name = 'graphql', timeout, insurance } = options;
  if (policies !== undefined && (limit !== undefined || window !== undefined)) {
    throw optionError('takes policies, or limit and window, not both');
  }
  if (policies === undefined && (limit === undefined || window === undefined)) {
    throw optionError("needs limit and window (such as { limit: 1000, window: '1m' }), or policies");
  }
  try {
    return createLimiter({
      policies: policies ?? { limit: limit as number, window: window as Duration },
      namespace: name,
      onStoreError: onStoreError === 'insurance' ? 'insurance' : 'throw',
      ...(store === undefined ? {} : { store }),
      ...(timeout === undefined ? {} : { timeout }),
      ...(insurance === undefined ? {} : { insurance }),
    });
  } catch (error) {
    // The core's checks name the core's function; the user called ours.
    if (error instanceof TollgateOptionError) {
      throw optionError(error.message.replace(/^createLimiter: /, ''));
    }
    throw error;
  }
}

function numberOption(value: unknown, name: string, fallback: number, what = 'a number, 0 or more'): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw optionError(`${name} must be ${what}; got ${String(value)}`);
  }
  return value;
}

function namesOption(value: unknown, name: string, fallback: readonly string[]): readonly string[] {
  if (value === undefined) return fallback;
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string' && item !== '')) {
    throw optionError(`${name} must be an array of argument or field names; got ${String(value)}`);
  }
  return Object.freeze([...value]);
}

function optionError(message: string): TollgateOptionError {
  return new TollgateOptionError(`${SOURCE}: ${message}`);
}
