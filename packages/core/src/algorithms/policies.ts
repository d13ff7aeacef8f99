/** Rate-limit policies: what users write, checked once and resolved into the numbers the stores use. */
import type { AlgorithmName, Policy, ResolvedPolicy, ResolvedTokenSlice } from '../model/policy.js';
import { type Duration, formatDuration, parseDuration } from '../support/duration.js';
import { TollgateOptionError, TollgateRangeError } from '../support/option-error.js';
import {
  closestName,
  describeValue,
  isSettingsObject,
  type NameHint,
  ownOptions,
  positiveWholeNumber,
  rejectUnknownNames,
} from '../support/value-checks.js';
import { nearLimitFraction, nearLimitTokens } from './near-limit.js';
import { ALGORITHM_NAMES, ALGORITHMS } from './registry.js';

const NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

const POLICY_FIELDS = [
  'limit',
  'window',
  'burst',
  'name',
  'algorithm',
  'nearLimit',
  'slice',
] as const satisfies readonly (keyof Policy)[];

const SLICE_FIELDS = ['size', 'ttl'] as const;
/** A slice's `ttl` when none is given (or the window, when that is shorter). */
const DEFAULT_SLICE_TTL_MS = 1000;

/** Fields of other limiters' policies that users bring along: a policy with a stray field must not run. */
const PEER_FIELDS: ReadonlyMap<string, NameHint> = new Map([
  ['max', { use: 'limit' }],
  ['points', { use: 'limit' }],
  ['windowMs', { use: "window (ms or '1m')" }],
  ['timeWindow', { use: "window (ms or '1m')" }],
  ['duration', { use: "window (ms or '1m')" }],
  ['capacity', { use: 'burst' }],
  ['maxTokens', { use: 'burst' }],
]);

/**
 * Validates one policy or several and resolves them. Throws a `TypeError` that names the bad field.
 *
 * @example
 * resolvePolicies([{ limit: 10, window: '1s' }, { limit: 1000, window: '1h', name: 'hourly' }]);
 */
export function resolvePolicies(policies: Policy | readonly Policy[]): readonly ResolvedPolicy[] {
  return resolvePoliciesFor(policies, '');
}

/**
 * {@link resolvePolicies} for a caller that has a name of its own: every message starts with `prefix`,
 * such as `'@tollgate/express: '`.
 *
 * @example
 * resolvePoliciesFor({ limit: 0, window: '1m' }, '@tollgate/express: ');
 * // throws "@tollgate/express: policy.limit must be a positive whole number; got 0"
 */
export function resolvePoliciesFor(policies: unknown, prefix: string): readonly ResolvedPolicy[] {
  const list: readonly unknown[] = Array.isArray(policies) ? policies : [policies];
  if (list.length === 0) throw new TollgateOptionError(`${prefix}policies must hold at least one policy`);
  const resolved = list.map((policy, index) =>
    resolvePolicy(policy, `${prefix}${list.length > 1 ? `policies[${index}]` : 'policy'}`),
  );
  const seen = new Set<string>();
  for (const { name } of resolved) {
    if (seen.has(name))
      throw new TollgateOptionError(`${prefix}policy names must be unique; '${name}' appears twice`);
    seen.add(name);
  }
  const sliced = resolved.findIndex((policy) => policy.slice !== undefined);
  if (sliced !== -1 && resolved.length > 1) {
    // Several policies are charged all or none, in one store step; a slice of one would break that.
    throw new TollgateOptionError(
      `${prefix}policies[${sliced}].slice: a limiter with a sliced policy must have that one policy only; ` +
        'give the other policies a limiter of their own',
    );
  }
  return Object.freeze(resolved);
}

function resolvePolicy(policy: unknown, where: string): ResolvedPolicy {
  if (!isSettingsObject(policy)) {
    throw new TollgateOptionError(`${where} must be an object like { limit: 100, window: '1m' }`);
  }
  rejectUnknownNames(policy, POLICY_FIELDS, PEER_FIELDS, `${where} has an unknown field`);
  // Own fields only: a `burst` on `Object.prototype` must not size every bucket that has none.
  const {
    limit: givenLimit,
    window,
    burst,
    name: givenName,
    algorithm = 'token-bucket',
    nearLimit,
    slice,
  } = ownOptions(policy);
  const limit = positiveWholeNumber(givenLimit, `${where}.limit`);
  const windowMs = parseDuration(window as Duration, `${where}.window`);
  const capacity = burst === undefined ? limit : positiveWholeNumber(burst, `${where}.burst`);
  const near = nearLimitFraction(nearLimit, `${where}.nearLimit`);
  const capacityUnits = capacity * windowMs;
  if (!Number.isSafeInteger(capacityUnits)) {
    throw new TollgateRangeError(
      `${where}: burst × window is too large to count exactly; use a shorter window`,
    );
  }
  const name = givenName ?? `${limit}-per-${formatDuration(windowMs)}`;
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    throw new TollgateOptionError(
      `${where}.name must be 1–64 letters, digits, '_', '-' or '.'; got ${String(name)}`,
    );
  }
  if (!ALGORITHM_NAMES.includes(algorithm as AlgorithmName)) {
    const names = ALGORITHM_NAMES.map((known) => `'${known}'`).join(', ');
    const hint = closestName(String(algorithm), ALGORITHM_NAMES);
    throw new TollgateOptionError(
      `${where}.algorithm must be one of ${names}; got ${describeValue(algorithm)}${hint ? `; did you mean '${hint}'?` : ''}`,
    );
  }
  const resolved: ResolvedPolicy = Object.freeze({
    name,
    algorithm: algorithm as AlgorithmName,
    limit,
    windowMs,
    capacity,
    capacityUnits,
    nearLimit: near,
    nearLimitTokens: nearLimitTokens(near, capacity),
    ...(slice === undefined ? {} : { slice: tokenSlice(slice, capacity, windowMs, `${where}.slice`) }),
  });
  ALGORITHMS[resolved.algorithm].validate(resolved, where);
  return resolved;
}

/** A policy's `slice`, checked against its capacity and window; a `TypeError` naming the field otherwise. */
function tokenSlice(slice: unknown, capacity: number, windowMs: number, where: string): ResolvedTokenSlice {
  if (!isSettingsObject(slice))
    throw new TollgateOptionError(`${where} must be an object like { size: 100 }`);
  rejectUnknownNames(slice, SLICE_FIELDS, new Map(), `${where} has an unknown field`);
  const { size, ttl } = ownOptions(slice);
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 2 || size > capacity) {
    throw new TollgateOptionError(
      `${where}.size must be a whole number from 2 to the policy's capacity (${capacity}); got ${describeValue(size)}`,
    );
  }
  if (ttl === undefined) return Object.freeze({ size, ttlMs: Math.min(DEFAULT_SLICE_TTL_MS, windowMs) });
  const ttlMs = parseDuration(ttl as Duration, `${where}.ttl`);
  if (ttlMs > windowMs) {
    // A slice spent past its window's end could carry a whole window's tokens into the next ones.
    throw new TollgateOptionError(
      `${where}.ttl must be at most the policy's window (${formatDuration(windowMs)}); got ${formatDuration(ttlMs)}`,
    );
  }
  return Object.freeze({ size, ttlMs });
}

/**
 * `policy` with another `limit` and capacity (`burst`), checked as a policy is, its name, algorithm and
 * window kept: the buckets it is stored in are the same, and what they hold under one limit is read
 * under the other. Throws a `TypeError` naming `where`.
 *
 * @example
 * withLimits(resolvePolicies({ limit: 10, window: '1m' })[0], 100, 100, 'override'); // 100 per minute
 */
export function withLimits(
  policy: ResolvedPolicy,
  limit: unknown,
  burst: unknown,
  where: string,
): ResolvedPolicy {
  const newLimit = positiveWholeNumber(limit, `${where}.limit`);
  const capacity = burst === undefined ? newLimit : positiveWholeNumber(burst, `${where}.burst`);
  const capacityUnits = capacity * policy.windowMs;
  if (!Number.isSafeInteger(capacityUnits)) {
    throw new TollgateRangeError(`${where}: burst × window is too large to count exactly`);
  }
  const resolved: ResolvedPolicy = Object.freeze({
    ...policy,
    limit: newLimit,
    capacity,
    capacityUnits,
    nearLimitTokens: nearLimitTokens(policy.nearLimit, capacity),
  });
  ALGORITHMS[resolved.algorithm].validate(resolved, where);
  return resolved;
}

/**
 * The longest any state of `policies` can take to be as good as fresh again, from a bucket owed in full
 * (the deepest a refused request takes one): a store keeps a key at least this long after its limits
 * change, so that no bucket is forgotten sooner than the new limits refill it.
 *
 * @example
 * refillBoundMs(resolvePolicies({ limit: 10, window: '1m' })); // 120000
 */
export function refillBoundMs(policies: readonly ResolvedPolicy[]): number {
  let bound = 0;
  for (const { windowMs, capacityUnits, limit } of policies) {
    bound = Math.max(bound, 2 * Math.max(windowMs, Math.ceil(capacityUnits / limit)));
  }
  return bound;
}
