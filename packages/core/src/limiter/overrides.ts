/**
 * Overrides, as users give them: one client's limits, changed at runtime (`limiter.setOverride`), checked
 * against the limiter's policies and resolved into the policies the stores decide by.
 */
import { withLimits } from '../algorithms/policies.js';
import type { ResolvedPolicy } from '../model/policy.js';
import type { OverrideResult } from '../model/store.js';
import { type Duration, parseDuration } from '../support/duration.js';
import { TollgateOptionError } from '../support/option-error.js';
import { describeValue, isSettingsObject, ownOptions, rejectUnknownNames } from '../support/value-checks.js';

/**
 * One policy's limits in an override: a number is its `limit` (and capacity); an object may give the
 * token bucket's `burst` too (default: the override's `limit`).
 *
 * @example
 * const raised: PolicyOverride = { limit: 1000, burst: 2000 };
 */
export type PolicyOverride = number | { readonly limit: number; readonly burst?: number };

/**
 * What `setOverride` takes: for a limiter of one policy, its {@link PolicyOverride}; for any limiter, an
 * object of {@link PolicyOverride}s by policy name (a policy not named keeps its limits).
 *
 * @example
 * await limiter.setOverride('key:acme', 1000);                              // one policy
 * await limiter.setOverride('key:acme', { burst: 50, hourly: { limit: 10_000 } }); // by name
 */
export type LimitOverride = PolicyOverride | { readonly [policyName: string]: PolicyOverride };

/** Options of `setOverride`. */
export interface OverrideOptions {
  /**
   * How long the override lasts: ms or a string such as `'1h'`. Then the policies' own limits apply
   * again, in every process. Default: until `removeOverride`.
   */
  ttl?: Duration;
}

/** A client's override, as `getOverride` reads it from the store. */
export interface Override {
  /** The limiter's policies with the override's limits, in the limiter's order. */
  readonly policies: readonly ResolvedPolicy[];
  /** When it ends, in ms since the epoch by the store's clock; `undefined`: when it is removed. */
  readonly expiresAtMs: number | undefined;
}

/**
 * `given` as the policies a store decides by: `policies` with the override's limits. Throws a `TypeError`
 * naming the bad field, so a bad override is refused before it is stored.
 *
 * @example
 * resolveOverride(limiter.policies, { hourly: 5000 }); // the policies, 'hourly' at 5000
 */
export function resolveOverride(
  policies: readonly ResolvedPolicy[],
  given: unknown,
): readonly ResolvedPolicy[] {
  const onePolicy = typeof given === 'number' || (isSettingsObject(given) && Object.hasOwn(given, 'limit'));
  if (onePolicy) {
    if (policies.length > 1) {
      const names = policies.map(({ name }) => `${name}: …`).join(', ');
      throw new TollgateOptionError(
        `override: this limiter has ${policies.length} policies; give each its limits by name, as { ${names} }`,
      );
    }
    return Object.freeze([policyOverride(policies[0] as ResolvedPolicy, given, 'override')]);
  }
  if (!isSettingsObject(given)) {
    throw new TollgateOptionError(
      `override must be a limit, { limit, burst? }, or limits by policy name; got ${describeValue(given)}`,
    );
  }
  const names = policies.map(({ name }) => name);
  rejectUnknownNames(given, names, new Map(), 'override names no policy of this limiter');
  const byName = ownOptions(given) as Record<string, unknown>;
  if (names.every((name) => byName[name] === undefined)) {
    throw new TollgateOptionError(
      'override names none of the policies: to go back to their limits, use removeOverride',
    );
  }
  return Object.freeze(
    policies.map((policy) => {
      const limits = byName[policy.name];
      return limits === undefined ? policy : policyOverride(policy, limits, `override.${policy.name}`);
    }),
  );
}

/**
 * The `ttl` of `setOverride`'s options, in ms; `undefined` for none. Throws a `TypeError` for options that
 * are not {@link OverrideOptions}.
 *
 * @example
 * overrideTtlMs({ ttl: '1h' }); // 3600000
 */
export function overrideTtlMs(options: unknown): number | undefined {
  if (options === undefined) return undefined;
  if (!isSettingsObject(options))
    throw new TollgateOptionError("setOverride's options must be an object like { ttl: '1h' }");
  rejectUnknownNames(options, ['ttl'], new Map(), "setOverride's options have an unknown field");
  const { ttl } = ownOptions(options);
  return ttl === undefined ? undefined : parseDuration(ttl as Duration, 'setOverride ttl');
}

/** What a store answered, as `getOverride` answers it. */
export function overrideOf(result: OverrideResult | undefined): Override | undefined {
  if (result === undefined) return undefined;
  return Object.freeze({ policies: result.policies, expiresAtMs: result.expiresAtMs });
}

function policyOverride(policy: ResolvedPolicy, given: unknown, where: string): ResolvedPolicy {
  if (typeof given === 'number') return withLimits(policy, given, undefined, where);
  if (!isSettingsObject(given)) {
    throw new TollgateOptionError(
      `${where} must be a limit or { limit, burst? }; got ${describeValue(given)}`,
    );
  }
  rejectUnknownNames(given, ['limit', 'burst'], new Map(), `${where} has an unknown field`);
  const { limit, burst } = ownOptions(given);
  return withLimits(policy, limit, burst, where);
}
