/** The refusal as GraphQL answers errors: a `GraphQLError` whose `extensions` carry the problem details. */
import {
  type Decision,
  problemDetails,
  refusalStatus,
  TollgateError,
  type TollgateErrorCode,
} from '@tollgate/core';
import { GraphQLError } from 'graphql';

/** The codes of a refusal: a budget spent, a cost no budget can hold, or a store that failed. */
export type CostLimitCode = Extract<
  TollgateErrorCode,
  'TOLLGATE_RATE_LIMITED' | 'TOLLGATE_COST_EXCEEDS_CAPACITY' | 'TOLLGATE_STORE_UNAVAILABLE'
>;

/**
 * An operation refused before it ran. Its `extensions` (what the response's `errors[0].extensions`
 * shows): `code` (`'TOLLGATE_RATE_LIMITED'`, `'TOLLGATE_COST_EXCEEDS_CAPACITY'` or
 * `'TOLLGATE_STORE_UNAVAILABLE'`), `cost` (the estimate), `retryAfterMs` when a wait will do, and
 * `problem`, RFC 9457 problem details (`type`, `title`, `status`, `detail`, `violated-policies`).
 * `statusCode` is the HTTP status the servers answer with: 429, 403 for a cost that exceeds a
 * capacity, 503 for a store that failed with `onStoreError: 'deny'`; `headers` the rate-limit headers.
 *
 * It carries no stack trace: a refusal is an answer, not a fault. `instanceof TollgateError` holds for
 * it, by its `code`.
 *
 * @example
 * if (error instanceof CostLimitError && error.code === 'TOLLGATE_RATE_LIMITED') metrics.throttled.add(1);
 */
export class CostLimitError extends GraphQLError {
  /** Which refusal this is; stable across versions. */
  readonly code: CostLimitCode;
  /** The HTTP status of the answer: 429, 403 or 503. */
  readonly statusCode: number;
  /** The rate-limit headers of the answer (`Retry-After` included when a wait will do). */
  readonly headers: Readonly<Record<string, string>>;
  /** The limiter's decision; `undefined` when the store failed. */
  readonly decision: Decision | undefined;

  constructor(cost: number, decision: Decision | undefined, headers: Readonly<Record<string, string>>) {
    const code = codeOf(decision);
    const statusCode = decision === undefined ? 503 : refusalStatus(decision);
    const problem =
      decision === undefined
        ? {
            title: 'The rate limit could not be checked',
            status: 503,
            detail: 'The rate-limit store is unavailable; try again shortly.',
          }
        : problemDetails(decision);
    const extensions: Record<string, unknown> = { code, cost, problem };
    if (decision?.retryAfterMs !== undefined) extensions.retryAfterMs = decision.retryAfterMs;
    // No stack trace: nothing between the two assignments can throw.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(problem.detail, { extensions });
    Error.stackTraceLimit = stackTraceLimit;
    this.code = code;
    this.statusCode = statusCode;
    this.headers = headers;
    this.decision = decision;
  }

  /** The entry of docs/errors.md for this code. */
  get help(): string {
    return TollgateError.helpFor(this.code);
  }
}

function codeOf(decision: Decision | undefined): CostLimitCode {
  if (decision === undefined) return 'TOLLGATE_STORE_UNAVAILABLE';
  return decision.reason === 'cost-exceeds-capacity'
    ? 'TOLLGATE_COST_EXCEEDS_CAPACITY'
    : 'TOLLGATE_RATE_LIMITED';
}
