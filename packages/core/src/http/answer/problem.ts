/**
 * The default body of a refused request: RFC 9457 problem details, `quota-exceeded` (429) when a wait
 * will do, `cost-exceeds-capacity` (403) when none will.
 */
import type { Decision } from '../../model/decision.js';
import { retryAfterSeconds } from './headers.js';

/**
 * The media type of the default body. RFC 9457 defines no `charset` parameter for it (the content is
 * JSON, always UTF-8), so none is sent.
 */
export const PROBLEM_JSON = 'application/problem+json';

/**
 * The problem type for a request denied by a quota policy, as draft-ietf-httpapi-ratelimit-headers-11
 * §5.1 defines it. The draft asks IANA to register it; it is not registered until the RFC is published.
 */
export const QUOTA_EXCEEDED_TYPE = 'https://iana.org/assignments/http-problem-types#quota-exceeded';

/**
 * Tollgate's problem type for a request that costs more tokens than some policy's bucket can ever hold:
 * no wait will do. The URI leads to the `@tollgate/core` README, which documents it.
 */
export const COST_EXCEEDS_CAPACITY_TYPE =
  'https://www.npmjs.com/package/@tollgate/core#cost-exceeds-capacity';

/** An RFC 9457 problem details object for a 429 answer. */
export interface QuotaExceededProblem {
  readonly type: typeof QUOTA_EXCEEDED_TYPE;
  readonly title: string;
  /** The answer's status: 429, or the limiter's `statusCode`. */
  readonly status: number;
  readonly detail: string;
  /** The names of the policies that had too few tokens. */
  readonly 'violated-policies': string[];
}

/** An RFC 9457 problem details object for a request no wait can let through (status 403). */
export interface CostExceedsCapacityProblem {
  readonly type: typeof COST_EXCEEDS_CAPACITY_TYPE;
  readonly title: string;
  readonly status: 403;
  readonly detail: string;
  /** The names of the policies whose capacity is below the cost. */
  readonly 'violated-policies': string[];
  /** The tokens the request costs. */
  readonly cost: number;
}

/**
 * The status of a refused request: 429 when waiting helps; 403 when the cost exceeds what some policy can
 * ever hold. Not 429, whose clients retry after a wait that will never come; not 413, which is about the
 * size of the content while a cost may come from anything. 403 says the server understood the request
 * and refuses it, and that the same request should not be repeated unchanged (RFC 9110 §15.5.4).
 *
 * `statusCode` is the limiter's status for a refusal a wait will end.
 *
 * @example
 * refusalStatus(decision); // 429
 * refusalStatus(decision, 503); // 503, or 403 when the cost exceeds a capacity
 */
export function refusalStatus(decision: Decision, statusCode = 429): number {
  return decision.reason === 'cost-exceeds-capacity' ? 403 : statusCode;
}

/**
 * The problem details for a refused decision: {@link costExceedsCapacityProblem} when no wait will do,
 * else {@link quotaExceededProblem} with `status` (the answer's, when it is not 429).
 *
 * @example
 * problemDetails(decision).status; // 429 or 403, as refusalStatus(decision)
 */
export function problemDetails(
  decision: Decision,
  status = 429,
): QuotaExceededProblem | CostExceedsCapacityProblem {
  return decision.reason === 'cost-exceeds-capacity'
    ? costExceedsCapacityProblem(decision)
    : quotaExceededProblem(decision, status);
}

/**
 * The `quota-exceeded` problem details for a denied decision. `detail` says how long to wait: the
 * `Retry-After` of the same answer.
 *
 * @example
 * quotaExceededProblem(decision).detail; // 'Too many requests: retry in 3 seconds.'
 */
export function quotaExceededProblem(decision: Decision, status = 429): QuotaExceededProblem {
  const violated = decision.policies.filter((p) => p.retryAfterMs !== 0).map((p) => p.policy);
  const wait = retryAfterSeconds(decision);
  return {
    type: QUOTA_EXCEEDED_TYPE,
    title: 'Request cannot be satisfied as assigned quota has been exceeded',
    status,
    detail:
      wait !== undefined
        ? decision.reason === 'banned'
          ? `Too many requests after being limited: banned, retry in ${plural(wait, 'second')}.`
          : `Too many requests: retry in ${plural(wait, 'second')}.`
        : decision.decidedBy.capacity === 0 // `limit: 0`
          ? `Policy '${decision.decidedBy.policy}' allows no requests.`
          : overCapacityDetail(decision),
    'violated-policies': violated,
  };
}

/**
 * The `cost-exceeds-capacity` problem details: the request costs more than some policy's bucket can ever
 * hold, so it is refused without charging anything, and no wait will let it through.
 *
 * @example
 * costExceedsCapacityProblem(decision).detail;
 * // "This request costs 6 tokens, more than policy '5-per-1m' can ever hold (5)."
 */
export function costExceedsCapacityProblem(decision: Decision): CostExceedsCapacityProblem {
  return {
    type: COST_EXCEEDS_CAPACITY_TYPE,
    title: 'Request costs more than a quota policy can ever allow',
    status: 403,
    detail: overCapacityDetail(decision),
    'violated-policies': decision.policies.filter((p) => p.retryAfterMs === undefined).map((p) => p.policy),
    cost: decision.cost,
  };
}

function overCapacityDetail({ cost, decidedBy }: Decision): string {
  return `This request costs ${cost} tokens, more than policy '${decidedBy.policy}' can ever hold (${decidedBy.capacity}).`;
}

function plural(count: number, unit: string): string {
  return `${count} ${unit}${count === 1 ? '' : 's'}`;
}
