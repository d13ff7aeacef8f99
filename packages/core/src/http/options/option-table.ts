/** Every option the adapters share, one entry each: its docs, its default and its check. */

import { nearLimitFraction } from '../../algorithms/near-limit.js';
import { resolvePoliciesFor } from '../../algorithms/policies.js';
import { ALGORITHM_NAMES } from '../../algorithms/registry.js';
import {
  banRule,
  DEFAULT_DENY_CACHE,
  type DenyCacheOptions,
  denyCacheSettings,
  type InsuranceOptions,
  insuranceSettings,
  storeOption,
  timeoutOption,
} from '../../limiter/limiter-options.js';
import { limitOrZero } from '../../limiter/zero-limit.js';
import type { BanRule } from '../../model/ban.js';
import type { AlgorithmName, Policy } from '../../model/policy.js';
import type { Store } from '../../model/store.js';
import { type Duration, parseDuration } from '../../support/duration.js';
import { TollgateOptionError } from '../../support/option-error.js';
import {
  closestName,
  flagOption,
  isSettingsObject,
  ownOptions,
  positiveWholeNumber,
  rejectUnknownNames,
} from '../../support/value-checks.js';
import { type Logger, WARNING_CODES, type WarningSwitches } from '../../support/warnings.js';
import type { RateLimitCallback } from '../answer/callbacks.js';
import {
  ALLOWED_ANSWER_HEADERS,
  headersSwitchedOff,
  LIMITED_ANSWER_HEADERS,
} from '../answer/header-switches.js';
import { HEADER_PROFILES, type HeaderProfile } from '../answer/headers.js';
import { type AllowList, allowListOption } from '../identity/allow-list.js';
import { byIp, type KeyFunction } from '../identity/request-keys.js';
import { delaySettings, type ResolvedDelay } from './delay-option.js';
import type {
  AdapterSettings,
  LimitedMessage,
  MeteredCost,
  PerRequest,
  RateLimitOptions,
  StoreFailureAnswer,
  SuccessTest,
} from './option-types.js';

/** What an option's check is told besides the value. */
export interface OptionSite {
  /** The option as messages name it, adapter first: `'@tollgate/express: limit'`. */
  readonly what: string;
  /** The adapter's settings, for defaults it knows better (its logger). */
  readonly settings: AdapterSettings;
}

/**
 * One option: what the options tables in the READMEs say about it, and its check.
 *
 * @example
 * const burst: OptionEntry<number | undefined> = {
 *   doc: 'the bucket capacity, when it should differ from `limit`',
 *   type: '`number`',
 *   default: '`limit`',
 *   check: (value, { what }) => (value === undefined ? undefined : positiveWholeNumber(value, what)),
 * };
 */
export interface OptionEntry<Resolved> {
  /** What the option does, in one line (Markdown). */
  readonly doc: string;
  /**
   * Its type as the docs show it (Markdown); `{req}` and `{Req}` stand for the adapter's request, `{res}`
   * for its response.
   */
  readonly type: string;
  /** Its default as the docs show it (Markdown). */
  readonly default: string;
  /** Validates the value (`undefined` when not given) and resolves it, default applied; throws a `TypeError`. */
  readonly check: (value: unknown, site: OptionSite) => Resolved;
}

const NAME_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * `limit` when neither it nor `policies` is given: per client, enough for any person's use of an app (a
 * page that fires dozens of API calls at once fits), too few for a script that hammers it. See the
 * adapters' READMEs, "Defaults", for how it compares with the peers' defaults.
 */
export const DEFAULT_LIMIT = 100;
/** `window` when neither it nor `policies` is given: with {@link DEFAULT_LIMIT}, one token every 600 ms. */
export const DEFAULT_WINDOW = '1m';
/** A property name later code can write as `req.rateLimit`: an identifier. */
const PROPERTY_PATTERN = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** Names that would reach an object's prototype rather than hold a value. */
const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'prototype'];

const STORE_FAILURE_ANSWERS: readonly StoreFailureAnswer[] = ['insurance', 'allow', 'deny'];

/** `onStoreError` as given: an answer, or a function of the error and the request. */
type StoreFailureOption =
  | StoreFailureAnswer
  | ((error: unknown, request: unknown) => StoreFailureAnswer | Promise<StoreFailureAnswer>);

/** A value as TypeScript writes it: `'draft-10'`, `false`. */
const literal = (value: unknown) => (typeof value === 'string' ? `'${value}'` : String(value));
const code = (value: unknown) => `\`${literal(value)}\``;

function flag(fallback: boolean) {
  return {
    default: code(fallback),
    check(value: unknown, { what }: OptionSite): boolean {
      if (value === undefined) return fallback;
      if (typeof value !== 'boolean') throw new TollgateOptionError(`${what} must be true or false`);
      return value;
    },
  };
}

function optionalFunction<F>(value: unknown, { what }: OptionSite): F | undefined {
  if (value !== undefined && typeof value !== 'function')
    throw new TollgateOptionError(`${what} must be a function`);
  return value as F | undefined;
}

function headerProfile(value: unknown, { what }: OptionSite): HeaderProfile {
  const profile = value ?? HEADER_PROFILES[0];
  if (HEADER_PROFILES.includes(profile as HeaderProfile)) return profile as HeaderProfile;
  const allowed = HEADER_PROFILES.map(literal);
  throw new TollgateOptionError(
    `${what} must be ${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}; got ${String(value)}`,
  );
}

function warningSwitches(value: unknown, { what }: OptionSite): WarningSwitches {
  if (value === undefined) return true;
  if (typeof value === 'boolean') return value;
  if (!isSettingsObject(value))
    throw new TollgateOptionError(`${what} must be a boolean or an object of codes`);
  rejectUnknownNames(value, WARNING_CODES, new Map(), `${what} has an unknown code`);
  for (const [warning, on] of Object.entries(value)) {
    if (on !== undefined && typeof on !== 'boolean') {
      throw new TollgateOptionError(`${what}.${warning} must be true or false; got ${String(on)}`);
    }
  }
  // A code not named is on: the copy keeps one on `Object.prototype` from switching it off.
  return ownOptions(value);
}

function positiveCost(value: unknown, what: string): PerRequest<unknown, number> {
  if (typeof value === 'function') return value as (request: unknown) => number | Promise<number>;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new TollgateOptionError(`${what} must be a positive number or a function; got ${String(value)}`);
  }
  return value;
}

/** `cost`: a number, a function of the request, or `{ reserve, settle }` (copied, without a prototype). */
function requestCost(
  value: unknown,
  { what }: OptionSite,
): PerRequest<unknown, number> | MeteredCost<unknown, unknown> {
  if (value === undefined) return 1;
  if (!isSettingsObject(value)) return positiveCost(value, what);
  rejectUnknownNames(value, ['reserve', 'settle'], new Map(), `${what} has an unknown field`);
  const { reserve, settle } = ownOptions(value);
  if (reserve === undefined) {
    throw new TollgateOptionError(
      `${what}.reserve is missing: the tokens to charge when the request arrives`,
    );
  }
  if (typeof settle !== 'function') {
    throw new TollgateOptionError(
      `${what}.settle must be a function of the request and the response that returns the true cost`,
    );
  }
  return Object.freeze({
    reserve: positiveCost(reserve, `${what}.reserve`),
    settle: settle as MeteredCost<unknown, unknown>['settle'],
  });
}

/**
 * The options, in the order the docs list them. Adding an option: a field in {@link RateLimitOptions} and
 * an entry here (the compiler refuses one without the other), then regenerate the READMEs' tables.
 */
export const OPTION_TABLE = {
  limit: {
    doc: 'tokens per `window`; a function of the request gives per-plan limits; [`0`](#refusing-every-request-limit-0) refuses every request',
    type: '`number` or `({req}) => number | Promise<number>`',
    default: `\`${DEFAULT_LIMIT}\` (unless \`policies\` is given); see [Defaults](#defaults)`,
    check: (value, { what }): PerRequest<unknown, number> | undefined =>
      value === undefined || typeof value === 'function'
        ? (value as PerRequest<unknown, number> | undefined)
        : limitOrZero(value, what),
  },
  window: {
    doc: 'the time in which `limit` tokens refill, evenly',
    type: "`number` (ms) or a string: `'500ms'`, `'15s'`, `'10 seconds'`, `'2 minutes'`, `'1.5h'`, `'1d'`, `'1w'`",
    default: code(DEFAULT_WINDOW),
    check: (value, { what }) => (value === undefined ? undefined : parseDuration(value as Duration, what)),
  },
  burst: {
    doc: 'the bucket capacity, when it should differ from `limit`',
    type: '`number`',
    default: '`limit`',
    check: (value, { what }) => (value === undefined ? undefined : positiveWholeNumber(value, what)),
  },
  algorithm: {
    doc: "how `limit` per `window` is counted: a token bucket, a fixed window from a client's first request (as the peers count), or a sliding window; see [Algorithms](../../README.md#algorithms)",
    type: `\`${ALGORITHM_NAMES.map(literal).join(' | ')}\``,
    default: "`'token-bucket'`",
    check(value, { what }): AlgorithmName | undefined {
      if (value === undefined || ALGORITHM_NAMES.includes(value as AlgorithmName))
        return value as AlgorithmName;
      const hint = closestName(String(value), ALGORITHM_NAMES);
      throw new TollgateOptionError(
        `${what} must be ${ALGORITHM_NAMES.map(literal).join(', ')}; got ${literal(value)}${hint ? `; did you mean '${hint}'?` : ''}`,
      );
    },
  },
  nearLimit: {
    doc: 'mark a request as near the limit (`decision.nearLimit`, `onNearLimit`) once the tokens used, its own included, reach this fraction of the capacity; with `policies`, per policy; see [Near the limit](../core/README.md#near-the-limit)',
    type: '`number`: above 0, at most 1',
    default: 'none',
    check: (value, { what }) => nearLimitFraction(value, what),
  },
  policies: {
    doc: 'several policies, checked and charged together; instead of `limit`/`window`/`burst`/`algorithm`/`nearLimit`',
    type: '`Policy | Policy[]`',
    default: 'none',
    check(value, { settings }): Policy | readonly Policy[] | undefined {
      if (value === undefined) return undefined;
      // Own copies: the limiters built from them later read no field from a prototype (or a later edit).
      const own = Array.isArray(value) ? Object.freeze(Array.from(value, ownOptions)) : ownOptions(value);
      resolvePoliciesFor(own, `${settings.adapter}: `);
      return own as Policy | readonly Policy[];
    },
  },
  delay: {
    doc: "hold a request over the limit until its turn, up to `maxWait`, instead of a 429; it goes on with its turn's headers, turns handed out by the store at the limit's rate across servers; a client that hangs up while waiting is not charged; token buckets only, not with a metered `cost` or `dryRun`; see [Waiting for a turn](../../docs/waiting.md#in-http-middleware-delay)",
    type: "`{ maxWait: number | '2s' | …, maxWaiters?: number, sleep?: (ms, signal) => Promise<void> }` or `false`",
    default: 'none: refused at once (`maxWaiters`: `1000`)',
    check: (value, { what }): ResolvedDelay | undefined => delaySettings(value, what),
  },
  ban: {
    doc: "refuse a client outright for `duration` once it was refused `after` times in a row (no request admitted in between): rate-limiter-flexible's `blockDuration`, @fastify/rate-limit's `ban`",
    type: "`{ after: number, duration: number | '15m' | … }`",
    default: 'none',
    check: (value, { what }): BanRule | undefined => banRule(value, what),
  },
  exponentialBackoff: {
    doc: "each refusal in a row doubles the wait before the next admission (1×, 2×, 4× the policies' wait at the first, up to 1024×), shown in `Retry-After`; an admitted request ends the streak: @fastify/rate-limit's `exponentialBackoff`",
    type: '`boolean`',
    default: '`false`',
    check(value, { what }): boolean {
      return flagOption(value, what);
    },
  },
  continueExceeding: {
    doc: "a refused request restarts each policy it did not fit (a fixed window starts again, a token bucket is charged the cost as debt down to one bucket owed, a sliding window counts it up to `limit`), so a client that keeps knocking stays out: @fastify/rate-limit's `continueExceeding`",
    type: '`boolean`',
    default: '`false`',
    check(value, { what }): boolean {
      return flagOption(value, what);
    },
  },
  overrides: {
    doc: "lets `setOverride(key, limits, { ttl })` change one client's limits at runtime, in every process from its next check, shown in the headers; each check reads the key's override in the same store step, and the limiter keeps no deny cache",
    type: '`boolean`',
    default: '`false`',
    check(value, { what }): boolean {
      return flagOption(value, what);
    },
  },
  store: {
    doc: 'where buckets live; one `RedisStore` shared by every server shares the limits',
    type: '`Store`: `MemoryStore`, `RedisStore` or your own',
    default: "a `MemoryStore` of the limiter's own",
    check: (value, { what }): Store => storeOption(value, what),
  },
  key: {
    doc: 'who is limited: the identity of a request',
    type: '`KeyFunction<{Req}>`: `({req}, access) => string | undefined | Promise<…>`',
    default: '`byIp()` (IPv6 grouped by /56)',
    check: (value, site) => optionalFunction<KeyFunction<unknown>>(value, site) ?? byIp(),
  },
  name: {
    doc: "the limiter's namespace in the store: limiters with one name and one store share buckets",
    type: '`string`: 1–64 letters, digits, `_ . : -`',
    default: 'derived; see [Namespaces](#namespaces-which-limiters-share-buckets)',
    check(value, { what }): string | undefined {
      if (value === undefined || (typeof value === 'string' && NAME_PATTERN.test(value))) return value;
      throw new TollgateOptionError(
        `${what} must be 1–64 letters, digits or '_ . : -'; got ${String(value)}`,
      );
    },
  },
  cost: {
    doc: 'the tokens a request costs; `{ reserve, settle }` for a cost known only after the response: `reserve` is charged first, the difference to what `settle` returns once the response has ended is charged or given back; see [Reserve, then settle](../core/README.md#reserve-then-settle)',
    type: '`number` or `({req}) => number | Promise<number>`: positive; or `{ reserve: number | ({req}) => …, settle: ({req}, {res}) => number | Promise<number> }`',
    default: '`1`',
    check: requestCost,
  },
  skip: {
    doc: 'requests for which it returns true are not limited and get no headers',
    type: '`({req}) => boolean | Promise<boolean>`',
    default: 'none',
    check: (value, site) => optionalFunction<(request: unknown) => boolean | Promise<boolean>>(value, site),
  },
  allowList: {
    doc: 'clients never charged and sent no headers: client IPs (as the framework resolves them) and identities (`key`), or a function; see [Allow-list](#allow-list)',
    type: '`string[]` or `({req}, key) => boolean | Promise<boolean>`',
    default: 'none',
    check: (value, { what }): AllowList<unknown> | undefined => allowListOption(value, what),
  },
  skipSuccessfulRequests: {
    doc: 'give a request its tokens back when its response succeeded, so only failures count (failed logins); see [Counting only some responses](#counting-only-some-responses)',
    type: '`boolean`',
    ...flag(false),
  },
  skipFailedRequests: {
    doc: 'give a request its tokens back when its response failed, so only successes count',
    type: '`boolean`',
    ...flag(false),
  },
  requestWasSuccessful: {
    doc: 'whether a response counts as a success, for the two options above',
    type: '`({req}, {res}) => boolean | Promise<boolean>`',
    default: 'status below 400',
    check: (value, site) => optionalFunction<SuccessTest<unknown, unknown>>(value, site),
  },
  headers: {
    doc: 'the standard rate-limit headers; see [Response headers](#response-headers)',
    type: `\`${HEADER_PROFILES.map(literal).join(' | ')}\``,
    default: code(HEADER_PROFILES[0]),
    check: headerProfile,
  },
  legacyHeaders: {
    doc: 'also send `X-RateLimit-Limit`, `-Remaining` and `-Reset`',
    type: '`boolean`',
    ...flag(false),
  },
  addHeaders: {
    doc: 'switch headers of limited answers off one by one, as in @fastify/rate-limit',
    type: "`{ [lower-case name]: boolean }`: `'ratelimit'`, `'ratelimit-policy'`, `'ratelimit-limit'`, `'ratelimit-remaining'`, `'ratelimit-reset'`, `'x-ratelimit-*'`, `'retry-after'`",
    default: 'all on',
    check: (value, { what }) => headersSwitchedOff(value, LIMITED_ANSWER_HEADERS, what),
  },
  addHeadersOnExceeding: {
    doc: 'switch headers of allowed answers off one by one',
    type: 'as `addHeaders`, without `retry-after`',
    default: 'all on',
    check: (value, { what }) => headersSwitchedOff(value, ALLOWED_ANSWER_HEADERS, what),
  },
  statusCode: {
    doc: 'the status of a limited answer (a cost beyond capacity is always 403)',
    type: '`number`: 400–599',
    default: '`429`',
    check(value, { what }): number {
      if (value === undefined) return 429;
      if (typeof value === 'number' && Number.isInteger(value) && value >= 400 && value <= 599) return value;
      throw new TollgateOptionError(`${what} must be a whole number from 400 to 599; got ${String(value)}`);
    },
  },
  message: {
    doc: 'the 429 body: text, JSON, or a function of the request and [`info`](#the-429-answer)',
    type: '`string`, an object, or `({req}, info) => string | object | Promise<…>`',
    default: 'RFC 9457 problem details',
    check(value, { what }): LimitedMessage<unknown> | undefined {
      if (
        value === undefined ||
        (value !== null && ['string', 'object', 'function'].includes(typeof value))
      ) {
        return value as LimitedMessage<unknown> | undefined;
      }
      throw new TollgateOptionError(`${what} must be a string, an object or a function`);
    },
  },
  handler: {
    doc: 'answers a limited request instead; not with `throwOnLimit`',
    type: 'a function; see [`handler`](#handler)',
    default: 'none',
    check: (value, site) => optionalFunction<(...args: never[]) => unknown>(value, site),
  },
  throwOnLimit: {
    doc: "hand a `RateLimitError` to the framework's error handling instead of answering",
    type: '`boolean`',
    ...flag(false),
  },
  dryRun: {
    doc: 'shadow mode: decide and charge as usual, but let every request go on; would-be refusals are counted as `dry-run-limited`; see [Dry run](#dry-run)',
    type: '`boolean` or `({req}) => boolean | Promise<boolean>`',
    default: '`false`',
    check(value, { what }): PerRequest<unknown, boolean> {
      if (value === undefined) return false;
      if (typeof value === 'boolean' || typeof value === 'function') {
        return value as PerRequest<unknown, boolean>;
      }
      throw new TollgateOptionError(`${what} must be true, false or a function of the request`);
    },
  },
  dryRunHeaders: {
    doc: 'in dry run, send the rate-limit headers as enforcing would (never `Retry-After`)',
    type: '`boolean`',
    ...flag(false),
  },
  onExceeding: {
    doc: 'called for each request let through, with the request and [`info`](#the-429-answer); not awaited, and if it throws that is logged',
    type: '`({req}, info) => unknown`',
    default: 'none',
    check: (value, site) => optionalFunction<RateLimitCallback<unknown>>(value, site),
  },
  onExceeded: {
    doc: 'called for each request refused, likewise',
    type: '`({req}, info) => unknown`',
    default: 'none',
    check: (value, site) => optionalFunction<RateLimitCallback<unknown>>(value, site),
  },
  onNearLimit: {
    doc: 'called for each request let through near the limit (see `nearLimit`), likewise',
    type: '`({req}, info) => unknown`',
    default: 'none',
    check: (value, site) => optionalFunction<RateLimitCallback<unknown>>(value, site),
  },
  requestPropertyName: {
    doc: "where later code finds the request's [`info`](#the-request-property); `false`: nowhere",
    type: '`string` or `false`',
    default: "`'rateLimit'`",
    check(value, { what }): string | undefined {
      if (value === false) return undefined;
      if (value === undefined) return 'rateLimit';
      if (typeof value === 'string' && PROPERTY_PATTERN.test(value) && !PROTOTYPE_NAMES.includes(value)) {
        return value;
      }
      throw new TollgateOptionError(
        `${what} must be a property name like 'rateLimit', or false; got ${literal(value)}`,
      );
    },
  },
  onStoreError: {
    doc: "when the store fails: the per-process insurance limiter decides (`'insurance'`), the request passes unlimited (`'allow'`), or the error goes to the framework (`'deny'`); see [Production](../../README.md#production)",
    type: "`'insurance' | 'allow' | 'deny'` or `(error, {req}) => …` (may be async)",
    default: "`'insurance'`",
    check(value, { what }): StoreFailureOption | undefined {
      if (value === undefined || typeof value === 'function') return value as StoreFailureOption | undefined;
      if (STORE_FAILURE_ANSWERS.includes(value as StoreFailureAnswer)) return value as StoreFailureAnswer;
      throw new TollgateOptionError(
        `${what} must be 'insurance', 'allow', 'deny' or a function; got ${literal(value)}`,
      );
    },
  },
  insurance: {
    doc: 'the insurance limiter: `instances` divides each limit among that many app servers',
    type: '`{ instances?: number, maxKeys?: number }`',
    default: '`{ instances: 1, maxKeys: 100_000 }`',
    check: (value, { what }): Required<InsuranceOptions> => insuranceSettings(value ?? {}, what),
  },
  denyCache: {
    doc: 'answer a client the store told to wait in process, until the wait is over; `false`: off',
    type: '`false` or `{ maxKeys?: number }`',
    default: '`{ maxKeys: 10_000 }` (none before a `MemoryStore`)',
    check: (value, { what }): false | Required<DenyCacheOptions> =>
      value === undefined ? DEFAULT_DENY_CACHE : denyCacheSettings(value, what),
  },
  failOpen: {
    doc: "the older spelling of `onStoreError`: `true` is `'allow'`, `false` is `'deny'`",
    type: '`boolean`',
    default: 'none',
    check(value, { what }): boolean | undefined {
      if (value === undefined || typeof value === 'boolean') return value;
      throw new TollgateOptionError(`${what} must be true or false`);
    },
  },
  timeout: {
    doc: 'the longest a check waits for a store that gives no answer before it takes `onStoreError`; time this process spends busy does not count',
    type: '`number` (ms), a string as for `window`, or `false` (no limit)',
    default: "`'1s'`",
    check: (value, { what }): number | undefined => timeoutOption(value, what),
  },
  logger: {
    doc: 'where warnings and store errors go',
    type: '`{ warn(message: string): void; error(message: string): void }`',
    default: '`console`',
    check(value, { what, settings }): Logger {
      const logger = (value ?? settings.logger ?? console) as Partial<Logger>;
      if (typeof logger.warn !== 'function' || typeof logger.error !== 'function') {
        throw new TollgateOptionError(`${what} must have warn and error methods`);
      }
      return logger as Logger;
    },
  },
  warnings: {
    doc: 'switch warnings off, all or by [code](../core/README.md#warning-codes)',
    type: '`boolean`, or `{ [code]: boolean }`',
    default: '`true` (all on)',
    check: warningSwitches,
  },
} as const satisfies { readonly [Name in keyof RateLimitOptions<unknown>]-?: OptionEntry<unknown> };

/** The name of an option every adapter takes. */
export type OptionName = keyof typeof OPTION_TABLE;

/** Each option as its check resolved it, default applied. */
export type CheckedOptions = {
  readonly [Name in OptionName]: ReturnType<(typeof OPTION_TABLE)[Name]['check']>;
};

/** The names of the options, in the docs' order. */
export const OPTION_NAMES = Object.keys(OPTION_TABLE) as readonly OptionName[];
