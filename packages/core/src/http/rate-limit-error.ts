/** The error adapters throw (or pass to `next`) when `throwOnLimit` is set, for the app's error handler to render. */
import type { RateLimitInfo } from './outcome.js';

/**
 * A request was rate limited. Carries what an error handler needs: `statusCode`/`status` 429, the
 * headers to send (`Retry-After` included) and the decision. Koa's default error handling already sends
 * `status`, `headers` and `message`; Fastify's and Express's use `statusCode`.
 *
 * @example
 * app.setErrorHandler((error, request, reply) => {
 *   if (error instanceof RateLimitError) return reply.code(429).send({ retryInMs: error.info.decision.retryAfterMs });
 *   throw error;
 * });
 */
export class RateLimitError extends Error {
  override readonly name = 'RateLimitError';
  /** Always 429. */
  readonly statusCode = 429;
  /** Always 429 (the name Koa and http-errors read). */
  readonly status = 429;
  /** The message is safe to show clients (Koa and http-errors read this). */
  readonly expose = true;
  /** A stable code for error handlers and logs. */
  readonly code = 'TOLLGATE_RATE_LIMITED';

  constructor(
    /** The rate-limit headers of the answer, `Retry-After` included. */
    readonly headers: Readonly<Record<string, string>>,
    /** The limiter and its decision. */
    readonly info: RateLimitInfo,
  ) {
    super('Too Many Requests');
  }
}
