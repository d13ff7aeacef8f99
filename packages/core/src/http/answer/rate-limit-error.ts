/** The error adapters throw (or pass to `next`) when `throwOnLimit` is set, for the app's error handler to render. */
import { TollgateError } from '../../support/tollgate-error.js';
import type { RateLimitInfo } from './outcome.js';
import { refusalStatus } from './problem.js';

/**
 * A request was refused by a rate limit. Carries what an error handler needs: the status, the headers to
 * send (`Retry-After` included when a wait will do) and the decision. Koa's default error handling
 * already sends `status`, `headers` and `message`; Fastify's and Express's use `statusCode`.
 *
 * A {@link TollgateError}. It carries no stack trace (its `stack` is its name and message): it is an answer, not a fault.
 *
 * Two kinds, told apart by `code` (or `info.decision.reason`):
 * - `'TOLLGATE_RATE_LIMITED'`, status 429 (or the limiter's `statusCode`): too many requests; retry after
 *   `Retry-After`.
 * - `'TOLLGATE_COST_EXCEEDS_CAPACITY'`, status 403: the request costs more than some policy can ever
 *   hold, so no wait will let it through.
 *
 * @example
 * app.setErrorHandler((error, request, reply) => {
 *   if (error instanceof RateLimitError) return reply.code(error.statusCode).send({ retryInMs: error.info.decision.retryAfterMs });
 *   throw error;
 * });
 */
export class RateLimitError extends TollgateError {
  override readonly name = 'RateLimitError';
  /** 429 (or the limiter's `statusCode`), or 403 when the cost exceeds a capacity. */
  readonly statusCode: number;
  /** The same as `statusCode` (the name Koa and http-errors read). */
  readonly status: number;
  /** The message is safe to show clients (Koa and http-errors read this). */
  readonly expose = true;
  /** A stable code for error handlers and logs. */
  declare readonly code: 'TOLLGATE_RATE_LIMITED' | 'TOLLGATE_COST_EXCEEDS_CAPACITY';

  constructor(
    /** The rate-limit headers of the answer, `Retry-After` included when a wait will do. */
    readonly headers: Readonly<Record<string, string>>,
    /** The limiter and its decision. */
    readonly info: RateLimitInfo,
    /** The status to answer: the limiter's `statusCode` for a limited request. Default: as the decision says. */
    status: number = refusalStatus(info.decision),
  ) {
    const overCapacity = info.decision.reason === 'cost-exceeds-capacity';
    // No stack trace: a refusal is an answer, not a fault, and its frames would be Tollgate's own.
    // Capturing them at a framework's depth costs several times a whole check in memory. Error's
    // constructor cannot throw between the two assignments.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(
      overCapacity ? 'TOLLGATE_COST_EXCEEDS_CAPACITY' : 'TOLLGATE_RATE_LIMITED',
      overCapacity ? 'Request Cost Exceeds Rate Limit Capacity' : 'Too Many Requests',
    );
    Error.stackTraceLimit = stackTraceLimit;
    this.statusCode = status;
    this.status = status;
  }
}
