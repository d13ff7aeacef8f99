/**
 * A limiter's options: what `createLimiter` takes, documented here once, and their check into the
 * {@link LimiterConfig} a limiter is built from. The HTTP layer checks its own options with the same rules
 * and builds its limiters from a config too: every option is checked once, where it is given.
 */

import { resolvePolicies } from '../algorithms/policies.js';
import type { BanRule } from '../model/ban.js';
import type { Policy, ResolvedPolicy } from '../model/policy.js';
import type { Store } from '../model/store.js';
import { MemoryStore } from '../stores/memory/memory-store.js';
import { type Duration, parseDuration } from '../support/duration.js';
import { TollgateOptionError } from '../support/option-error.js';
import {
  flagOption,
  isSettingsObject,
  ownOptions,
  positiveWholeNumber,
  rejectUnknownNames,
} from '../support/value-checks.js';
import { type Sleep, timerSleep } from './waits.js';

/**
 * What a check does when the store fails (down, silent past `timeout`, erroring):
 * - `'insurance'`: decide on the limiter's per-process insurance limiter (the decision is `degraded`);
 * - `'throw'`: reject with the store's error (a `StoreUnavailableError` when it is unreachable).
 */
export type StoreErrorAction = 'insurance' | 'throw';

/** A {@link StoreErrorAction}, or a function choosing one per failure (given the error and the key). */
export type OnStoreError =
  | StoreErrorAction
  | ((error: unknown, key: string) => StoreErrorAction | Promise<StoreErrorAction>);

/** Options of {@link createLimiter}. */
export interface LimiterOptions {
  /**
   * One policy, or several checked and charged together (all or none). A policy with `slice` (token
   * slices) must be the only one, and cannot be combined with `ban`, `exponentialBackoff` or
   * `continueExceeding`.
   */
  policies: Policy | readonly Policy[];
  /** Where buckets live. Default: a new {@link MemoryStore} (per process). Use a `RedisStore` to share. */
  store?: Store;
  /**
   * Keeps this limiter's buckets apart from other limiters' on the same store. Letters, digits and
   * `_ . : -`, at most 64. Default: none (limiters with equal policies on one store share buckets).
   */
  namespace?: string;
  /**
   * How long a check waits for a store that gives no answer before it takes `onStoreError`. Time this
   * process spends busy does not count: an answer that arrived in time decides, however late it is read.
   * Default: `'1s'`. `false`: wait as long as it takes.
   */
  timeout?: Duration | false;
  /** When the store fails. Default: `'insurance'`. */
  onStoreError?: OnStoreError;
  /** The insurance limiter: the same policies in a `MemoryStore` of this process. Default: `{ instances: 1 }`. */
  insurance?: InsuranceOptions;
  /**
   * Answers checks of a client that the store has told to wait, in process, until the wait is over:
   * no round trip for a client that keeps knocking. Only in front of stores that are not `local`.
   * Default: `{ maxKeys: 10_000 }`. `false`: off.
   */
  denyCache?: false | DenyCacheOptions;
  /**
   * Bans a client that keeps knocking while it is limited: after `after` refusals in a row (no request
   * admitted in between), every check is refused for `duration` (rate-limiter-flexible's
   * `blockDuration`, @fastify/rate-limit's `ban`). Counted atomically with the policies, in the store.
   * Such a refusal has `reason: 'banned'` and `retryAfterMs` the time left (`Retry-After` over HTTP).
   * Default: none.
   */
  ban?: BanOptions;
  /**
   * Each refusal in a row (no request admitted in between) doubles the wait before the next admission:
   * the first waits what the policies say, the next twice that from then, then 4×, up to 1024× the
   * first wait. While it lasts every check is refused, and each refusal doubles it again; an admitted
   * request ends the streak. Shown in `retryAfterMs` (so `Retry-After` and the `RateLimit` header's `t`).
   * Decided atomically with the policies, in the store. @fastify/rate-limit's `exponentialBackoff`.
   * Default: `false`.
   *
   * @example
   * createLimiter({ policies: { limit: 5, window: '1m' }, exponentialBackoff: true });
   */
  exponentialBackoff?: boolean;
  /**
   * A refused request restarts each policy it did not fit, so a client that keeps knocking stays out:
   * a fixed window starts again at the refusal (its count kept); a token bucket is charged the refused
   * cost as debt, down to one full bucket owed; a sliding window counts the refused cost in its current
   * window, up to `limit`. A cost more than a policy holds restarts nothing. Decided atomically with the
   * policies, in the store. @fastify/rate-limit's `continueExceeding`. Default: `false`.
   *
   * @example
   * createLimiter({ policies: { limit: 5, window: '1m', algorithm: 'fixed-window' }, continueExceeding: true });
   */
  continueExceeding?: boolean;
  /**
   * Lets `setOverride` change one client's limits at runtime, fleet-wide: every check reads the key's
   * override in the same store step (on Redis, the same script call), so the next check in any process
   * decides by it. Costs the store one more read per check, and the limiter keeps no deny cache (another
   * process may raise a limit at any moment). When the store fails, the insurance limiter decides by the
   * policies' own limits. Not with a sliced policy. Default: `false`.
   *
   * @example
   * const limiter = createLimiter({ store, policies: { limit: 100, window: '1m' }, overrides: true });
   * await limiter.setOverride('key:acme', 1000, { ttl: '30d' });
   */
  overrides?: boolean;
  /**
   * The most calls given `maxWait` that may wait for their turn at once, in this process. Past it, a
   * call does not wait: it is admitted if the tokens are there now, else refused at once. Bounds the
   * memory waiters hold (a timer and a promise each). A positive whole number. Default: `1000`.
   */
  maxWaiters?: number;
  /**
   * How a call given `maxWait` sleeps until its turn. Inject one in tests, with the store's `clock`, to
   * move waits without real time passing. Default: a timer.
   *
   * @example
   * createLimiter({ policies, store: new MemoryStore({ clock }), sleep: (ms) => manualTimers.sleep(ms) });
   */
  sleep?: Sleep;
  /**
   * The most reservations by id (`reserve`'s `id`) open on one key at once, in every process: past it,
   * `reserve` is refused (`reason: 'too-many-open'`, `retryAfterMs` until the oldest open one's `ttl`
   * ends) and charges nothing, until one is settled, cancelled or forgotten. Bounds what the store keeps
   * per key. A positive whole number. Default: `1000`.
   *
   * @example
   * createLimiter({ store, policies: { limit: 100_000, window: '1m' }, maxOpen: 50 });
   */
  maxOpen?: number;
}

/** A limiter's ban: see {@link LimiterOptions.ban}. */
export interface BanOptions {
  /** Refusals in a row that start a ban. A positive whole number. `1`: the first refusal does. */
  after: number;
  /** How long a ban lasts: ms or a string such as `'15m'`. */
  duration: Duration;
}

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

/** Options of the deny cache. */
export interface DenyCacheOptions {
  /** The most clients remembered at once; the oldest is forgotten first. Default: `10_000`. */
  maxKeys?: number;
}

/** The default of `maxWaiters`: how many calls of one limiter may wait for their turn at once. */
export const DEFAULT_MAX_WAITERS = 1000;

/** The default of `maxOpen`: how many reservations by id may be open on one key at once. */
export const DEFAULT_MAX_OPEN = 1000;

/** A limiter's options, checked, with their defaults: what `createLimiter` builds a limiter from. */
export interface LimiterConfig {
  readonly policies: readonly ResolvedPolicy[];
  readonly store: Store;
  /** `''`: none. */
  readonly namespace: string;
  /** `undefined`: wait as long as the store takes. */
  readonly timeoutMs: number | undefined;
  readonly onStoreError: OnStoreError;
  /** The ban, exponential backoff and `continueExceeding`, as one rule; `undefined`: none of them. */
  readonly ban: BanRule | undefined;
  readonly insurance: Required<InsuranceOptions>;
  readonly denyCache: false | Required<DenyCacheOptions>;
  readonly overrides: boolean;
  readonly maxWaiters: number;
  readonly sleep: Sleep;
  readonly maxOpen: number;
}

/** A limiter's config but for its policies: what the limiters an HTTP limiter builds per limit share. */
export type LimiterSettings = Omit<LimiterConfig, 'policies'>;

const NAMESPACE_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;
const STORE_ERROR_ACTIONS: readonly StoreErrorAction[] = ['insurance', 'throw'];

/**
 * Checks `createLimiter`'s options, once, into the config a limiter is built from. Bad ones throw a
 * `TollgateOptionError` naming the field.
 *
 * @example
 * limiterConfig({ policies: { limit: 100, window: '1m' } }).policies[0].capacity; // 100
 */
export function limiterConfig(givenOptions: LimiterOptions): LimiterConfig {
  if (typeof givenOptions !== 'object' || givenOptions === null) {
    throw new TollgateOptionError(
      "createLimiter needs options like { policies: { limit: 100, window: '1m' } }",
    );
  }
  // Own fields only: an option not given is not given, whatever `Object.prototype` holds (a `ban` there
  // would ban every client; an `insurance` or `denyCache`, change how outages are answered).
  const options = ownOptions(givenOptions);
  return limiterConfigOf(resolvePolicies(options.policies), {
    store: storeOption(options.store, 'store'),
    namespace: namespaceOption(options.namespace, 'namespace'),
    timeoutMs: timeoutOption(options.timeout, 'timeout'),
    onStoreError: onStoreErrorOption(options.onStoreError, 'onStoreError'),
    ban: refusalRule(options.ban, options.exponentialBackoff, options.continueExceeding, ''),
    insurance: insuranceSettings(options.insurance ?? {}, 'insurance'),
    denyCache:
      options.denyCache === undefined
        ? DEFAULT_DENY_CACHE
        : denyCacheSettings(options.denyCache, 'denyCache'),
    overrides: flagOption(options.overrides, 'overrides'),
    maxWaiters:
      options.maxWaiters === undefined
        ? DEFAULT_MAX_WAITERS
        : positiveWholeNumber(options.maxWaiters, 'maxWaiters'),
    sleep: sleepOf(options.sleep, 'sleep'),
    maxOpen:
      options.maxOpen === undefined ? DEFAULT_MAX_OPEN : positiveWholeNumber(options.maxOpen, 'maxOpen'),
  });
}

/**
 * Policies and settings, each checked on its own, put together: see {@link checkLimiterCombinations}.
 */
export function limiterConfigOf(
  policies: readonly ResolvedPolicy[],
  settings: LimiterSettings,
): LimiterConfig {
  checkLimiterCombinations(policies, settings);
  return Object.freeze({ policies, ...settings });
}

/**
 * The rules that span a limiter's options, each checked on its own already: throws a
 * `TollgateOptionError` for a combination no limiter can keep.
 */
export function checkLimiterCombinations(
  policies: readonly ResolvedPolicy[],
  { store, ban, overrides }: Pick<LimiterSettings, 'store' | 'ban' | 'overrides'>,
): void {
  const slice = policies[0]?.slice;
  if (overrides && slice !== undefined) {
    throw new TollgateOptionError(
      'overrides cannot be combined with policy.slice: slices admit without asking the store',
    );
  }
  if (overrides && typeof store.override !== 'function') {
    throw new TollgateOptionError(
      'overrides need a store that holds them, such as MemoryStore or RedisStore',
    );
  }
  if (slice !== undefined && ban !== undefined) {
    // A slice admits in process, where refusals in a row go uncounted and a ban or backoff unseen.
    const rule = ban.after > 0 ? 'ban' : ban.exponentialBackoff ? 'exponentialBackoff' : 'continueExceeding';
    throw new TollgateOptionError(
      `policy.slice cannot be combined with ${rule}: slices admit without asking the store`,
    );
  }
}

/** The `store` option: a `Store`; `undefined`: a new `MemoryStore`. */
export function storeOption(value: unknown, what: string): Store {
  const store = (value ?? new MemoryStore()) as Partial<Store>;
  if (typeof store.update !== 'function' || typeof store.reset !== 'function') {
    throw new TollgateOptionError(`${what} must be a Store such as MemoryStore or RedisStore`);
  }
  return store as Store;
}

/** The `namespace` option: `''` for none. */
function namespaceOption(value: unknown, what: string): string {
  if (value === undefined || value === '') return '';
  if (typeof value === 'string' && NAMESPACE_PATTERN.test(value)) return value;
  throw new TollgateOptionError(`${what} must be 1–64 letters, digits or '_ . : -'; got ${String(value)}`);
}

/** The `timeout` option in ms: `'1s'` when absent, `undefined` for `false` (no limit). */
export function timeoutOption(value: unknown, what: string): number | undefined {
  return value === false ? undefined : parseDuration((value ?? '1s') as Duration, what);
}

/** The `onStoreError` option, or what an `onStoreError` function answered: `'insurance'` when absent. */
export function onStoreErrorOption(value: unknown, what: string): OnStoreError {
  if (value === undefined) return 'insurance';
  if (typeof value === 'function' || STORE_ERROR_ACTIONS.includes(value as StoreErrorAction)) {
    return value as OnStoreError;
  }
  throw new TollgateOptionError(
    `${what} must be 'insurance', 'throw' or a function returning one; got ${String(value)}`,
  );
}

/**
 * A ban rule from its options, checked; `undefined` for none. Made once per limiter, so stores may key
 * their caches by it.
 *
 * @example
 * banRule({ after: 5, duration: '15m' }, 'ban'); // { after: 5, durationMs: 900000 }
 */
export function banRule(options: unknown, what: string): BanRule | undefined {
  if (options === undefined) return undefined;
  if (!isSettingsObject(options))
    throw new TollgateOptionError(`${what} must be an object like { after: 5, duration: '15m' }`);
  rejectUnknownNames(options, ['after', 'duration'], new Map(), `${what} has an unknown field`);
  const { after: givenAfter, duration } = ownOptions(options);
  const after = positiveWholeNumber(givenAfter, `${what}.after`);
  const durationMs = parseDuration(duration as Duration, `${what}.duration`);
  return Object.freeze({ after, durationMs });
}

/**
 * A limiter's rule for refusals, from its `ban`, `exponentialBackoff` and `continueExceeding` options,
 * checked (each message starts with `prefix`); `undefined` for none of them. Made once per limiter, so
 * stores may key their caches by it.
 *
 * @example
 * refusalRule(undefined, true, false, ''); // { after: 0, durationMs: 0, exponentialBackoff: true, continueExceeding: false }
 */
export function refusalRule(
  ban: unknown,
  exponentialBackoff: unknown,
  continueExceeding: unknown,
  prefix: string,
): BanRule | undefined {
  return refusalRuleOf(
    banRule(ban, `${prefix}ban`),
    flagOption(exponentialBackoff, `${prefix}exponentialBackoff`),
    flagOption(continueExceeding, `${prefix}continueExceeding`),
  );
}

/** {@link refusalRule} from its parts, each checked already. */
export function refusalRuleOf(
  ban: BanRule | undefined,
  exponentialBackoff: boolean,
  continueExceeding: boolean,
): BanRule | undefined {
  if (!exponentialBackoff && !continueExceeding) return ban;
  const { after, durationMs } = ban ?? { after: 0, durationMs: 0 };
  return Object.freeze({ after, durationMs, exponentialBackoff, continueExceeding });
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
  return Object.freeze({
    instances: positiveWholeNumber(instances, `${what}.instances`),
    maxKeys: positiveWholeNumber(maxKeys, `${what}.maxKeys`),
  });
}

/** The deny cache when its option is not given. */
export const DEFAULT_DENY_CACHE: Required<DenyCacheOptions> = Object.freeze({ maxKeys: 10_000 });

/**
 * Checks the `denyCache` option (`false` or {@link DenyCacheOptions}); throws a `TypeError` naming `what`.
 *
 * @example
 * denyCacheSettings({ maxKeys: 500 }, 'denyCache'); // { maxKeys: 500 }
 */
export function denyCacheSettings(option: unknown, what: string): false | Required<DenyCacheOptions> {
  if (option === false) return false;
  if (!isSettingsObject(option))
    throw new TollgateOptionError(`${what} must be false or an object like { maxKeys: 10_000 }`);
  rejectUnknownNames(option, ['maxKeys'], new Map(), `${what} has an unknown field`);
  const { maxKeys = 10_000 } = ownOptions(option);
  return Object.freeze({ maxKeys: positiveWholeNumber(maxKeys, `${what}.maxKeys`) });
}

/** A `sleep` option, checked: the default timer when absent. */
export function sleepOf(sleep: unknown, what: string): Sleep {
  if (sleep === undefined) return timerSleep;
  if (typeof sleep === 'function') return sleep as Sleep;
  throw new TollgateOptionError(
    `${what} must be a function (ms, signal) => Promise<void>; got ${String(sleep)}`,
  );
}
