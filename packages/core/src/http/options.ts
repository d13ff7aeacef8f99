/** The options every adapter shares: one public type, validated once into a resolved config. */
import { createHash } from 'node:crypto';
import { type Duration, parseDuration } from '../duration.js';
import { MemoryStore } from '../memory-store.js';
import { type Policy, resolvePolicies } from '../policy.js';
import type { Store } from '../store.js';
import { DEFAULT_HEADER_PROFILE, HEADER_PROFILES, type HeaderProfile } from './headers.js';
import type { RateLimitInfo } from './outcome.js';
import { byIp, type KeyFunction } from './request-keys.js';
import type { Logger, WarningSwitches } from './warnings.js';

/** A value, or a function of the request that returns it (possibly async). */
export type PerRequest<Req, T> = T | ((request: Req) => T | Promise<T>);

/** What a 429 answer says instead of the default problem details: text, a JSON object, or a function. */
export type LimitedMessage<Req> =
  | string
  | Record<string, unknown>
  | ((
      request: Req,
      info: RateLimitInfo,
    ) => string | Record<string, unknown> | Promise<string | Record<string, unknown>>);

/**
 * Options shared by `@tollgate/express`, `@tollgate/fastify` and `@tollgate/koa`. Give either
 * `limit` + `window` (+ `burst`), or `policies`.
 */
export interface RateLimitOptions<Req> {
  /** Tokens per `window`; may be a function of the request for per-plan limits. */
  limit?: PerRequest<Req, number>;
  /** The window: ms or `'15s'`, `'1m'`, `'1h'`, … */
  window?: Duration;
  /** Bucket capacity when it should differ from `limit`. Default: `limit`. */
  burst?: number;
  /** Several policies, checked and charged together. Instead of `limit`/`window`/`burst`. */
  policies?: Policy | readonly Policy[];
  /** Where buckets live. Default: a `MemoryStore` of this limiter's own. Share one `RedisStore` across limiters. */
  store?: Store;
  /** Who is limited. Default: `byIp()`. See `byApiKey`, `byUser`, `firstOf`. */
  key?: KeyFunction<Req>;
  /**
   * This limiter's namespace in the store: limiters with the same name share buckets. Default: derived
   * from the policies (and, in Fastify, the route) and the order limiters are created in — stable
   * across processes running the same code. Set it to share on purpose, or to keep buckets across deploys
   * that add limiters.
   */
  name?: string;
  /** Tokens a request costs; a number or a function of the request. Default: `1`. */
  cost?: PerRequest<Req, number>;
  /** Requests for which this returns true are not limited and get no headers. */
  skip?: (request: Req) => boolean | Promise<boolean>;
  /** The standard header profile. Default: `'draft-11'` (see `HeaderProfile`). */
  headers?: HeaderProfile;
  /** Also send `X-RateLimit-Limit/-Remaining/-Reset` (reset as Unix epoch seconds). Default: `false`. */
  legacyHeaders?: boolean;
  /** The 429 body instead of RFC 9457 problem details: a string (text/plain), an object (JSON), or a function. */
  message?: LimitedMessage<Req>;
  /**
   * When the store fails or times out: `true` lets the request through (and logs), `false` hands the error
   * to the framework's error handling. Default: `true` — a Redis outage should not take the API down.
   */
  failOpen?: boolean;
  /** The longest a check may wait for the store before it counts as failed. Default: `'1s'`. `false`: no limit. */
  timeout?: Duration | false;
  /** Where warnings and store errors are logged. Default: `console` (Fastify: the app's logger). */
  logger?: Logger;
  /** Switch warnings off, all (`false`) or by code (`{ TOLLGATE_MISSING_IP: false }`). Default: on. */
  warnings?: WarningSwitches;
  /**
   * Instead of answering 429 itself, hand a `RateLimitError` to the framework's error handling
   * (Express `next(err)`, Fastify `setErrorHandler`, Koa error middleware), headers already set. Default: `false`.
   */
  throwOnLimit?: boolean;
  /** The adapter's own 429 handler; its type is the framework's (see each adapter). Not with `throwOnLimit`. */
  handler?: unknown;
}

/** The options after validation, with defaults applied. */
export interface ResolvedRateLimitOptions<Req> {
  /** The policies when they are the same for every request. */
  readonly policies: Policy | readonly Policy[] | undefined;
  /** Otherwise, the policy of a request (`limit` given as a function). */
  readonly policyOf: ((request: Req) => Promise<Policy>) | undefined;
  readonly store: Store;
  readonly key: KeyFunction<Req>;
  readonly name: string;
  readonly cost: PerRequest<Req, number>;
  readonly skip: ((request: Req) => boolean | Promise<boolean>) | undefined;
  readonly headers: HeaderProfile;
  readonly legacyHeaders: boolean;
  readonly message: LimitedMessage<Req> | undefined;
  readonly failOpen: boolean;
  readonly timeoutMs: number | undefined;
  readonly logger: Logger;
  readonly warnings: WarningSwitches;
  readonly throwOnLimit: boolean;
}

/** What an adapter tells the core about itself: its name for messages, and defaults it knows better. */
export interface AdapterSettings {
  /** The adapter's package, for messages: `'@tollgate/express'`. */
  readonly adapter: string;
  /** Makes default names stable by where the limiter is used (Fastify: the route). */
  readonly nameSeed?: string;
  /** The logger when none is given. Default: `console`. */
  readonly logger?: Logger;
}

const SHARED_OPTIONS = [
  'limit',
  'window',
  'burst',
  'policies',
  'store',
  'key',
  'name',
  'cost',
  'skip',
  'headers',
  'legacyHeaders',
  'message',
  'failOpen',
  'timeout',
  'logger',
  'warnings',
  'throwOnLimit',
  'handler',
] as const satisfies readonly (keyof RateLimitOptions<unknown>)[];

/** Options of other rate limiters that users bring along, with what to write instead. */
const FOREIGN_OPTIONS: Record<string, string> = {
  windowMs: "window (ms or '15m')",
  max: 'limit',
  timeWindow: "window (ms or '1m')",
  duration: "window (ms or '1m')",
  keyGenerator: 'key (see byIp, byApiKey, byUser)',
  standardHeaders: "headers ('draft-10', 'draft-7', 'draft-6' or false)",
};

const NAME_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;

/** How many limiters were given each default name so far: the n-th one gets suffix n. */
const defaultNamesGiven = new Map<string, number>();

/**
 * Validates an adapter's options once, at construction. Throws a `TypeError` naming the option.
 */
export function resolveRateLimitOptions<Req>(
  options: RateLimitOptions<Req>,
  settings: AdapterSettings,
): ResolvedRateLimitOptions<Req> {
  const where = settings.adapter;
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`${where}: options must be an object like { limit: 100, window: '1m' }`);
  }
  rejectUnknownOptions(options, settings);
  const { limit, window, burst, policies } = options;
  if (policies !== undefined && (limit !== undefined || window !== undefined || burst !== undefined)) {
    throw new TypeError(`${where}: give either policies or limit/window/burst, not both`);
  }
  if (policies === undefined && (limit === undefined || window === undefined)) {
    throw new TypeError(
      `${where}: needs { limit, window } (e.g. { limit: 100, window: '1m' }) or { policies }`,
    );
  }
  if (window !== undefined) parseDuration(window, `${where}: window`);
  if (burst !== undefined && (typeof burst !== 'number' || !Number.isSafeInteger(burst) || burst <= 0)) {
    throw new TypeError(`${where}: burst must be a positive whole number; got ${String(burst)}`);
  }
  const staticPolicies =
    typeof limit === 'function' ? undefined : (policies ?? (definedOnly({ limit, window, burst }) as Policy));
  const store = options.store ?? new MemoryStore();
  if (typeof store.update !== 'function' || typeof store.reset !== 'function') {
    throw new TypeError(`${where}: store must be a Store such as MemoryStore or RedisStore`);
  }
  const name = options.name ?? defaultName(staticPolicies, options, settings.nameSeed);
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    throw new TypeError(`${where}: name must be 1–64 letters, digits or '_ . : -'; got ${String(name)}`);
  }
  const headers = options.headers ?? DEFAULT_HEADER_PROFILE;
  if (!HEADER_PROFILES.includes(headers)) {
    throw new TypeError(
      `${where}: headers must be 'draft-10' or 'draft-11' (the same fields), 'draft-7', 'draft-6' or false; got ${String(headers)}`,
    );
  }
  const logger = options.logger ?? settings.logger ?? console;
  if (typeof logger?.warn !== 'function' || typeof logger.error !== 'function') {
    throw new TypeError(`${where}: logger must have warn and error methods`);
  }
  const timeout = options.timeout ?? '1s';
  optionalFunction(options.handler, `${where}: handler`);
  if (options.handler !== undefined && options.throwOnLimit) {
    throw new TypeError(`${where}: give either handler or throwOnLimit, not both`);
  }
  return {
    policies: staticPolicies,
    policyOf:
      typeof limit === 'function'
        ? async (request) => definedOnly({ limit: await limit(request), window, burst }) as Policy
        : undefined,
    store,
    key: optionalFunction(options.key, `${where}: key`) ?? byIp<Req>(),
    name,
    cost: costOption(options.cost, where),
    skip: optionalFunction(options.skip, `${where}: skip`),
    headers,
    legacyHeaders: booleanOption(options.legacyHeaders, false, `${where}: legacyHeaders`),
    message: messageOption(options.message, where),
    failOpen: booleanOption(options.failOpen, true, `${where}: failOpen`),
    timeoutMs: timeout === false ? undefined : parseDuration(timeout, `${where}: timeout`),
    logger,
    warnings: warningsOption(options.warnings, where),
    throwOnLimit: booleanOption(options.throwOnLimit, false, `${where}: throwOnLimit`),
  };
}

function rejectUnknownOptions(options: object, settings: AdapterSettings): void {
  const known = new Set<string>(SHARED_OPTIONS);
  for (const option of Object.keys(options)) {
    if (known.has(option)) continue;
    const instead = FOREIGN_OPTIONS[option];
    throw new TypeError(
      `${settings.adapter}: unknown option '${option}'${instead ? `; use ${instead}` : ''}. Known: ${[...known].join(', ')}`,
    );
  }
}

/**
 * A name from what the limiter does, not how its options were written: `'1m'` and `60000` give the same
 * name. The n-th limiter of the same shape in a process gets suffix n, so equal limiters never share.
 */
function defaultName(
  staticPolicies: Policy | readonly Policy[] | undefined,
  { window, burst }: RateLimitOptions<never>,
  seed: string | undefined,
): string {
  const policies = staticPolicies
    ? resolvePolicies(staticPolicies).map(({ name, limit, windowMs, capacity }) => [
        name,
        limit,
        windowMs,
        capacity,
      ])
    : ['per-request', window === undefined ? undefined : parseDuration(window), burst];
  const shape = JSON.stringify({ seed, policies });
  const base = `auto-${createHash('sha256').update(shape).digest('hex').slice(0, 12)}`;
  const given = (defaultNamesGiven.get(base) ?? 0) + 1;
  defaultNamesGiven.set(base, given);
  return given === 1 ? base : `${base}-${given}`;
}

/** The object without its `undefined` members (for `exactOptionalPropertyTypes`). */
function definedOnly<T extends object>(object: T): Partial<T> {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as Partial<T>;
}

function costOption<Req>(cost: PerRequest<Req, number> | undefined, where: string): PerRequest<Req, number> {
  if (cost === undefined) return 1;
  if (typeof cost === 'function') return cost;
  if (typeof cost !== 'number' || !Number.isFinite(cost) || cost <= 0) {
    throw new TypeError(`${where}: cost must be a positive number or a function; got ${String(cost)}`);
  }
  return cost;
}

function messageOption<Req>(
  message: LimitedMessage<Req> | undefined,
  where: string,
): LimitedMessage<Req> | undefined {
  if (message === undefined || ['string', 'function', 'object'].includes(typeof message)) {
    if (message !== null) return message;
  }
  throw new TypeError(`${where}: message must be a string, an object or a function`);
}

function warningsOption(warnings: WarningSwitches | undefined, where: string): WarningSwitches {
  if (warnings === undefined) return true;
  if (typeof warnings === 'boolean' || (typeof warnings === 'object' && warnings !== null)) return warnings;
  throw new TypeError(`${where}: warnings must be a boolean or an object of codes`);
}

function optionalFunction<F>(value: F | undefined, what: string): F | undefined {
  if (value !== undefined && typeof value !== 'function') throw new TypeError(`${what} must be a function`);
  return value;
}

function booleanOption(value: boolean | undefined, fallback: boolean, what: string): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new TypeError(`${what} must be true or false`);
  return value;
}
