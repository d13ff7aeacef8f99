/** The refusal of a GraphQL resolver's call: an error whose `extensions` the GraphQL server sends to the client. */
import { IntrinsicException } from '@nestjs/common';
import { type RateLimitInfo, type RateLimitRejection, TollgateError } from '@tollgate/core';
import { type RateLimitDetails, refusalDetails, refusalSentence } from './refusal-details.js';

/**
 * Thrown by `TollgateGuard` for a refused GraphQL operation (a query's or a mutation's guarded resolver,
 * or a subscription's start). GraphQL servers make a thrown error a GraphQL error, and copy its
 * `extensions` to the response (graphql-js 16 does, under Apollo Server and Mercurius alike):
 *
 * ```json
 * { "message": "Too many requests: retry in 9 seconds.", "path": ["search"],
 *   "extensions": { "code": "TOLLGATE_RATE_LIMITED", "retryAfter": 9, "status": 429, "type": "…#quota-exceeded",
 *     "title": "…", "detail": "Too many requests: retry in 9 seconds.", "violated-policies": ["10-per-1m"] } }
 * ```
 *
 * `extensions` is {@link RateLimitDetails}: the problem details, `code` and `retryAfter`. The HTTP answer
 * stays as the GraphQL server makes it (200, with the other fields' data), carrying the rate-limit headers
 * when the GraphQL context reaches the HTTP response. It is an `IntrinsicException`, so Nest does not log
 * it, and carries no stack trace: it is an answer, not a fault. `instanceof TollgateError` holds for it,
 * by its `code`.
 *
 * @example
 * // An Apollo formatError that keeps Tollgate's refusals as they are
 * formatError: (formatted, error) =>
 *   unwrapResolverError(error) instanceof GraphQLRateLimitError ? formatted : maskOther(formatted),
 */
export class GraphQLRateLimitError extends IntrinsicException {
  /** What the GraphQL response's error carries under `extensions`. */
  readonly extensions: RateLimitDetails;

  constructor(
    /** The answer the limiter would send over HTTP: status, content type and body text. */
    readonly rejection: RateLimitRejection,
    /** The refused operation's rate limit. */
    readonly info: RateLimitInfo,
  ) {
    const details = refusalDetails(rejection, info);
    // No stack trace, as for RateLimitException: nothing between the two assignments can throw.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(refusalSentence(details));
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'GraphQLRateLimitError';
    this.extensions = details;
  }

  /** `extensions.code`: `'TOLLGATE_RATE_LIMITED'`, or `'TOLLGATE_COST_EXCEEDS_CAPACITY'` when no wait will do. */
  get code(): RateLimitDetails['code'] {
    return this.extensions.code;
  }

  /** The entry of docs/errors.md for this code. */
  get help(): string {
    return TollgateError.helpFor(this.code);
  }
}
