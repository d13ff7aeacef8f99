/** The default 429 body: RFC 9457 problem details with the IANA `quota-exceeded` problem type. */
import type { Decision } from '../decision.js';

/** The media type of the default 429 body. */
export const PROBLEM_JSON = 'application/problem+json';

/** The registered problem type for a request denied by a quota policy. */
export const QUOTA_EXCEEDED_TYPE = 'https://iana.org/assignments/http-problem-types#quota-exceeded';

/** An RFC 9457 problem details object for a 429 answer. */
export interface QuotaExceededProblem {
  readonly type: typeof QUOTA_EXCEEDED_TYPE;
  readonly title: string;
  readonly status: 429;
  readonly detail: string;
  /** The names of the policies that had too few tokens. */
  readonly 'violated-policies': string[];
}

/**
 * The problem details for a denied decision. `detail` says how long to wait, or that no wait will do.
 *
 * @example
 * quotaExceededProblem(decision).detail; // 'Too many requests: retry in 3 seconds.'
 */
export function quotaExceededProblem(decision: Decision): QuotaExceededProblem {
  const violated = decision.policies.filter((p) => p.retryAfterMs !== 0).map((p) => p.policy);
  const { policy, capacity } = decision.decidedBy;
  const detail =
    decision.retryAfterMs !== undefined
      ? `Too many requests: retry in ${plural(Math.ceil(decision.retryAfterMs / 1000), 'second')}.`
      : capacity === 0 // `limit: 0`
        ? `Policy '${policy}' allows no requests.`
        : `This request costs ${decision.cost} tokens, more than policy '${policy}' can ever hold (${capacity}).`;
  return {
    type: QUOTA_EXCEEDED_TYPE,
    title: 'Request cannot be satisfied as assigned quota has been exceeded',
    status: 429,
    detail,
    'violated-policies': violated,
  };
}

function plural(count: number, unit: string): string {
  return `${count} ${unit}${count === 1 ? '' : 's'}`;
}
