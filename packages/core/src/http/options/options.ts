/** The options every adapter shares: one public type, checked once by the option table into a resolved config. */
import { createHash } from 'node:crypto';
import { resolvePoliciesFor } from '../../algorithms/policies.js';
import {
  checkLimiterCombinations,
  DEFAULT_MAX_OPEN,
  DEFAULT_MAX_WAITERS,
  type LimiterSettings,
  refusalRuleOf,
} from '../../limiter/limiter-options.js';
import { timerSleep } from '../../limiter/waits.js';
import { isZeroLimit, limitOrZero, resolveZeroLimit } from '../../limiter/zero-limit.js';
import type { AlgorithmName, Policy, ResolvedPolicy } from '../../model/policy.js';
import { parseDuration } from '../../support/duration.js';
import { fromSource, TollgateOptionError } from '../../support/option-error.js';
import { isSettingsObject, ownOptions, rejectUnknownNames } from '../../support/value-checks.js';
import { whyDelayCannotWait } from './delay-option.js';
import {
  type CheckedOptions,
  DEFAULT_LIMIT,
  DEFAULT_WINDOW,
  OPTION_NAMES,
  OPTION_TABLE,
  type OptionName,
} from './option-table.js';
import type { AdapterSettings, RateLimitOptions, StoreFailureAnswer } from './option-types.js';
import { PEER_OPTIONS } from './peer-option-hints.js';

/** The options after validation, with defaults applied: each option as its check in the option table left it. */
export type ResolvedRateLimitOptions<Req> = Omit<
  CheckedOptions,
  | 'limit'
  | 'window'
  | 'burst'
  | 'algorithm'
  | 'nearLimit'
  | 'policies'
  | 'name'
  | 'timeout'
  | 'failOpen'
  | 'onStoreError'
  | 'store'
  | 'overrides'
  | 'ban'
  | 'exponentialBackoff'
  | 'continueExceeding'
  | 'insurance'
  | 'denyCache'
> & {
  /** `onStoreError`, or what `failOpen` means, or the default. */
  readonly onStoreError:
    | StoreFailureAnswer
    | ((error: unknown, request: Req) => StoreFailureAnswer | Promise<StoreFailureAnswer>);
  /** The policies, resolved, when they are the same for every request. */
  readonly policies: readonly ResolvedPolicy[] | undefined;
  /** Otherwise (`limit` given as a function), how a request's policy is found. */
  readonly perRequestPolicy: PerRequestPolicy<Req> | undefined;
  /** The given name, or one derived from the policies. */
  readonly name: string;
  /**
   * What each core limiter behind it is built with, checked: the store, the options about refusals,
   * outages and waits, and the name as its namespace. The store failure answer is the HTTP limiter's.
   */
  readonly limiterSettings: Omit<LimiterSettings, 'onStoreError'>;
};

/** The policy of each request when `limit` is a function of the request. */
export interface PerRequestPolicy<Req> {
  /** The request's limit, as the function returned it, checked: a whole number, 0 to refuse every request. */
  readonly limitOf: (request: Req) => Promise<number>;
  /**
   * The policies of a limit, resolved: it with the static `window`, `burst` and `algorithm`. Built once
   * per limit seen.
   */
  readonly policyFor: (limit: number) => readonly ResolvedPolicy[];
}

const DEFAULT_WINDOW_MS = parseDuration(DEFAULT_WINDOW);

/** How many limiters were given each default name so far: the n-th one gets suffix n. */
const defaultNamesGiven = new Map<string, number>();

/**
 * Validates an adapter's options once, at construction, entry by entry of the option table. Throws a
 * `TypeError` that starts with the adapter and names the option.
 *
 * @example
 * const config = resolveRateLimitOptions({ limit: 100, window: '1m' }, { adapter: '@tollgate/express' });
 */
export function resolveRateLimitOptions<Req, Res = unknown>(
  options: RateLimitOptions<Req, Res>,
  adapterSettings: AdapterSettings,
): ResolvedRateLimitOptions<Req> {
  // Both copied once, here: no read of an option, now or per request, can reach `Object.prototype`.
  const settings = ownOptions(adapterSettings);
  const prefix = settings.adapter;
  if (!isSettingsObject(options)) {
    throw new TollgateOptionError(`${prefix}: options must be an object like { limit: 100, window: '1m' }`);
  }
  const own = inSharedNames(ownOptions(options), settings);
  rejectUnknownNames(own, OPTION_NAMES, PEER_OPTIONS, `${prefix}: unknown option`);
  const checked = checkEach(own, settings);
  checkCombinations(checked, prefix, settings.handlerName ?? 'handler');
  const {
    limit = DEFAULT_LIMIT,
    window = DEFAULT_WINDOW_MS,
    burst,
    algorithm,
    nearLimit,
    policies,
    name,
    timeout,
    failOpen,
    onStoreError,
    store,
    overrides,
    ban,
    exponentialBackoff,
    continueExceeding,
    insurance,
    denyCache,
    ...rest
  } = checked;
  const staticPolicies =
    typeof limit === 'function'
      ? undefined
      : (policies ?? (definedOnly({ limit, window, burst, algorithm, nearLimit }) as Policy));
  // Resolving also checks what no single option can: that burst × window can be counted exactly.
  const resolved =
    staticPolicies &&
    (isZeroLimit(staticPolicies)
      ? [resolveZeroLimit(staticPolicies, `${prefix}: `)]
      : resolvePoliciesFor(staticPolicies, `${prefix}: `));
  if (rest.delay !== undefined) {
    const metered = typeof rest.cost === 'object';
    const why = whyDelayCannotWait({ policies: resolved, algorithm, metered, dryRun: rest.dryRun });
    if (why !== undefined) throw new TollgateOptionError(`${prefix}: ${why}`);
  }
  const namespace = name ?? defaultName(resolved, [window, burst, algorithm], settings);
  const limiterSettings: ResolvedRateLimitOptions<Req>['limiterSettings'] = Object.freeze({
    store,
    namespace,
    timeoutMs: timeout,
    ban: refusalRuleOf(ban, exponentialBackoff, continueExceeding),
    insurance,
    denyCache,
    overrides,
    maxWaiters: rest.delay?.maxWaiters ?? DEFAULT_MAX_WAITERS,
    sleep: rest.delay?.sleep ?? timerSleep,
    maxOpen: DEFAULT_MAX_OPEN,
  });
  try {
    checkLimiterCombinations(resolved ?? [], limiterSettings);
  } catch (error) {
    throw fromSource(error, prefix);
  }
  return ownOptions({
    ...rest,
    policies: resolved,
    perRequestPolicy:
      typeof limit === 'function'
        ? policyOfRequest(limit, { window, burst, algorithm, nearLimit }, prefix)
        : undefined,
    name: namespace,
    onStoreError: onStoreError ?? (failOpen === undefined ? 'insurance' : failOpen ? 'allow' : 'deny'),
    limiterSettings,
  });
}

/**
 * The policy of a request when `limit` is a function: its result, with the static `window` and `burst`.
 * A plan whose limit is 0 is refused every request, whatever `burst` says (it is sized for the others).
 * Only a number is taken from the function, so nothing it returns is read for fields; the policy is
 * built here, without a prototype, and only for a limit not seen lately (see `limit`).
 */
function policyOfRequest<Req>(
  limit: (request: Req) => number | Promise<number>,
  {
    window,
    burst,
    algorithm,
    nearLimit,
  }: {
    window: number;
    burst: number | undefined;
    algorithm: AlgorithmName | undefined;
    nearLimit: number | undefined;
  },
  prefix: string,
): PerRequestPolicy<Req> {
  return {
    limitOf: async (request) => limitOrZero(await limit(request), `${prefix}: limit`),
    policyFor(limitOfRequest) {
      const policy = definedOnly({
        limit: limitOfRequest,
        window,
        burst: limitOfRequest === 0 ? undefined : burst,
        algorithm,
        nearLimit,
      }) as Policy;
      return isZeroLimit(policy) ? [resolveZeroLimit(policy, '')] : resolvePoliciesFor(policy, `${prefix}: `);
    },
  };
}

/**
 * The adapter's options under the shared table's names: one it has no use for is refused with the
 * adapter's message, and its own name for `handler` (`onLimited`) is read as `handler`. Still without a
 * prototype.
 */
function inSharedNames(own: Record<string, unknown>, settings: AdapterSettings): Record<string, unknown> {
  const { adapter, handlerName, notHere } = settings;
  const refused: Record<string, string> = {
    ...(handlerName === undefined ? {} : { handler: `there is no handler option here; use ${handlerName}` }),
    ...notHere,
  };
  for (const name of Object.keys(refused)) {
    if (Object.hasOwn(own, name)) throw new TollgateOptionError(`${adapter}: ${refused[name]}`);
  }
  if (handlerName === undefined || !Object.hasOwn(own, handlerName)) return own;
  const { [handlerName]: handler, ...rest } = own;
  return Object.assign(Object.create(null), rest, { handler });
}

function checkEach(options: Record<string, unknown>, settings: AdapterSettings): CheckedOptions {
  const checked: Partial<Record<OptionName, unknown>> = Object.create(null);
  for (const name of OPTION_NAMES) {
    const spelled = name === 'handler' ? (settings.handlerName ?? name) : name;
    checked[name] = OPTION_TABLE[name].check(options[name], {
      what: `${settings.adapter}: ${spelled}`,
      settings,
    });
  }
  return checked as CheckedOptions;
}

/** The rules that span options; each option on its own is the table's. */
function checkCombinations(checked: CheckedOptions, prefix: string, handlerName: string): void {
  const { limit, window, burst, algorithm, policies } = checked;
  if (policies !== undefined && (limit !== undefined || window !== undefined || burst !== undefined)) {
    throw new TollgateOptionError(`${prefix}: give either policies or limit/window/burst, not both`);
  }
  if (policies !== undefined && algorithm !== undefined) {
    throw new TollgateOptionError(`${prefix}: with policies, give each policy its own algorithm`);
  }
  if (policies !== undefined && checked.nearLimit !== undefined) {
    throw new TollgateOptionError(`${prefix}: with policies, give each policy its own nearLimit`);
  }
  if (checked.failOpen !== undefined && checked.onStoreError !== undefined) {
    throw new TollgateOptionError(
      `${prefix}: give either onStoreError or failOpen (its older spelling), not both`,
    );
  }
  if (checked.handler !== undefined && checked.throwOnLimit) {
    throw new TollgateOptionError(`${prefix}: give either ${handlerName} or throwOnLimit, not both`);
  }
}

/**
 * A name from what the limiter does, not how its options were written: `'1m'` and `60000` give the same
 * name. The n-th limiter of the same shape in a process gets suffix n, so equal limiters never share.
 */
function defaultName(
  resolved: readonly ResolvedPolicy[] | undefined,
  perRequest: readonly unknown[],
  settings: AdapterSettings,
): string {
  const policies = resolved
    ? resolved.map(({ name, algorithm, limit, windowMs, capacity }) => [
        name,
        algorithm,
        limit,
        windowMs,
        capacity,
      ])
    : ['per-request', ...perRequest];
  const shape = JSON.stringify({ seed: settings.nameSeed, policies });
  const base = `auto-${createHash('sha256').update(shape).digest('hex').slice(0, 12)}`;
  const given = (defaultNamesGiven.get(base) ?? 0) + 1;
  defaultNamesGiven.set(base, given);
  return given === 1 ? base : `${base}-${given}`;
}

/**
 * The object without its `undefined` members (for `exactOptionalPropertyTypes`), and without a prototype:
 * a policy built here has no `burst` unless it was given one, whatever `Object.prototype` holds.
 */
function definedOnly<T extends object>(object: T): Partial<T> {
  return ownOptions(
    Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as Partial<T>,
  );
}
