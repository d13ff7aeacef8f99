/** Rate-limit policies: what users write, checked once and resolved into the numbers the stores use. */
import { type Duration, formatDuration, parseDuration } from './duration.js';

/**
 * One token bucket, as people speak it: `{ limit: 100, window: '1m' }` is a bucket of 100 tokens that
 * refills continuously at 100 tokens per minute.
 *
 * @example
 * const perSecond: Policy = { limit: 10, window: '1s', name: 'burst' };
 * const perHour: Policy = { limit: 1000, window: '1h', name: 'hourly' };
 */
export interface Policy {
  /** Tokens added back per `window`, spread evenly over it. A positive whole number. */
  limit: number;
  /** The time in which `limit` tokens refill: milliseconds or a string such as `'15s'`, `'1m'`, `'1h'`. */
  window: Duration;
  /**
   * Bucket capacity: the most tokens that can be spent at once after a quiet spell.
   * Default: `limit`. A positive whole number.
   */
  burst?: number;
  /**
   * Names the policy in decisions, headers and storage keys. Letters, digits, `_`, `-`, `.`; at most 64.
   * Default: derived from the numbers, e.g. `'100-per-1m'`. Renaming a policy starts fresh buckets.
   */
  name?: string;
}

/**
 * A policy after validation, with everything the stores need precomputed.
 *
 * Bucket levels are kept in *units*: one token is `windowMs` units and each millisecond refills `limit`
 * units. With whole-millisecond clocks and whole costs every number stays an integer, so the Lua and the
 * TypeScript maths agree to the last bit and no rounding can admit an extra request.
 */
export interface ResolvedPolicy {
  /** The policy's name (given or derived). */
  readonly name: string;
  /** Tokens refilled per window. */
  readonly limit: number;
  /** The window in milliseconds. */
  readonly windowMs: number;
  /** Bucket capacity in tokens. */
  readonly capacity: number;
  /** Bucket capacity in units (`capacity * windowMs`). */
  readonly capacityUnits: number;
}

const NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Validates one policy or several and resolves them. Throws a `TypeError` that names the bad field.
 *
 * @example
 * resolvePolicies([{ limit: 10, window: '1s' }, { limit: 1000, window: '1h', name: 'hourly' }]);
 */
export function resolvePolicies(policies: Policy | readonly Policy[]): readonly ResolvedPolicy[] {
  const list = Array.isArray(policies) ? policies : [policies as Policy];
  if (list.length === 0) throw new TypeError('policies must hold at least one policy');
  const resolved = list.map((policy, index) =>
    resolvePolicy(policy, list.length > 1 ? `policies[${index}]` : 'policy'),
  );
  const seen = new Set<string>();
  for (const { name } of resolved) {
    if (seen.has(name)) throw new TypeError(`policy names must be unique; '${name}' appears twice`);
    seen.add(name);
  }
  return Object.freeze(resolved);
}

function resolvePolicy(policy: Policy, where: string): ResolvedPolicy {
  if (typeof policy !== 'object' || policy === null) {
    throw new TypeError(`${where} must be an object like { limit: 100, window: '1m' }`);
  }
  const limit = positiveInteger(policy.limit, `${where}.limit`);
  const windowMs = parseDuration(policy.window, `${where}.window`);
  const capacity = policy.burst === undefined ? limit : positiveInteger(policy.burst, `${where}.burst`);
  const capacityUnits = capacity * windowMs;
  if (!Number.isSafeInteger(capacityUnits)) {
    throw new RangeError(`${where}: burst × window is too large to count exactly; use a shorter window`);
  }
  const name = policy.name ?? `${limit}-per-${formatDuration(windowMs)}`;
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    throw new TypeError(`${where}.name must be 1–64 letters, digits, '_', '-' or '.'; got ${String(name)}`);
  }
  return Object.freeze({ name, limit, windowMs, capacity, capacityUnits });
}

function positiveInteger(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new TypeError(`${what} must be a positive whole number; got ${String(value)}`);
  }
  return value;
}
