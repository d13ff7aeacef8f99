/** The near-limit signal of a policy: its `nearLimit` fraction checked once, and judged per decision. */
import type { ResolvedPolicy } from '../model/policy.js';
import { TollgateOptionError } from '../support/option-error.js';
import { describeValue } from '../support/value-checks.js';

/**
 * A `nearLimit` option: a fraction above 0 and at most 1, or `undefined` (none). Anything else is a
 * `TypeError` naming `what`.
 *
 * @example
 * nearLimitFraction(0.8, 'policy.nearLimit'); // 0.8
 */
export function nearLimitFraction(value: unknown, what: string): number | undefined {
  if (value === undefined || (typeof value === 'number' && value > 0 && value <= 1)) return value;
  throw new TollgateOptionError(
    `${what} must be a fraction above 0 and at most 1, such as 0.8; got ${describeValue(value)}`,
  );
}

/**
 * The used tokens from which a policy of `capacity` is near its limit: `ceil(fraction × capacity)`, or
 * `undefined` without a fraction.
 *
 * The product is rounded to 12 significant digits first, so float noise cannot move the threshold by a
 * whole token: `0.07 × 100` is `7.000000000000001` in floating point, and must stay 7.
 *
 * @example
 * nearLimitTokens(0.8, 10); // 8: requests 8, 9 and 10 of a full bucket are near
 */
export function nearLimitTokens(fraction: number | undefined, capacity: number): number | undefined {
  if (fraction === undefined) return undefined;
  return Math.ceil(Number((fraction * capacity).toPrecision(12)));
}

/**
 * Whether a policy with `remaining` whole tokens left is near its limit (before knowing whether the
 * decision admitted the request: a refused decision clears it, see `decide`).
 */
export function isNearLimit(policy: ResolvedPolicy, remaining: number): boolean {
  const tokens = policy.nearLimitTokens;
  return tokens !== undefined && policy.capacity - remaining >= tokens;
}
