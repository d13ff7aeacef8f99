/** The refusal as Nest answers errors: an `HttpException` whose body is the limiter's answer. */
import { HttpException } from '@nestjs/common';
import { type RateLimitInfo, type RateLimitRejection, TollgateError } from '@tollgate/core';

/**
 * Thrown by `TollgateGuard` (and `concurrencyLimit`) for a refused request, with the rate-limit headers
 * (`Retry-After` included) already set on the response. Its status is 429 (or the limiter's
 * `statusCode`), or 403 when the request costs more than a policy can ever hold. `getResponse()` is the
 * RFC 9457 problem details object (`type`, `title`, `status`, `detail`, `violated-policies`), or the
 * `message` option's object, or `{ statusCode, message }` for a text `message`.
 *
 * Nest's default exception filter sends it as the limiter wrote it: `application/problem+json`, no
 * charset. A filter of yours sees it like any `HttpException`, and may answer it as it likes. It
 * carries no stack trace (its `stack` is its name and message): it is an answer, not a fault.
 * `instanceof TollgateError` holds for it, by its `code`, as for `RateLimitError`.
 *
 * @example
 * @Catch(RateLimitException)
 * export class RateLimitFilter implements ExceptionFilter {
 *   catch(exception: RateLimitException, host: ArgumentsHost) {
 *     const res = host.switchToHttp().getResponse<Response>();
 *     res.status(exception.getStatus()).json({ error: 'slow down', retryInMs: exception.info?.decision.retryAfterMs });
 *   }
 * }
 */
export class RateLimitException extends HttpException {
  constructor(
    /** The answer the limiter would send: status, content type and body text. */
    readonly rejection: RateLimitRejection,
    /** The refused request's rate limit; `undefined` for a concurrency limit's refusal. */
    readonly info?: RateLimitInfo,
  ) {
    const response = responseOf(rejection);
    // No stack trace: a refusal is an answer, not a fault, and its frames would be Tollgate's and Nest's
    // own. Capturing them costs more than the rest of the refusal's own work. Nothing between the two
    // assignments can throw.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(response, rejection.status);
    Error.stackTraceLimit = stackTraceLimit;
  }

  /**
   * `'TOLLGATE_COST_EXCEEDS_CAPACITY'` (status 403) for a request that costs more than a policy can ever
   * hold, else `'TOLLGATE_RATE_LIMITED'` (a concurrency limit's refusal included).
   */
  get code(): 'TOLLGATE_RATE_LIMITED' | 'TOLLGATE_COST_EXCEEDS_CAPACITY' {
    return this.info?.decision.reason === 'cost-exceeds-capacity'
      ? 'TOLLGATE_COST_EXCEEDS_CAPACITY'
      : 'TOLLGATE_RATE_LIMITED';
  }

  /** The entry of docs/errors.md for this code. */
  get help(): string {
    return TollgateError.helpFor(this.code);
  }
}

/**
 * The body as an object, as Nest's filters expect one: a text answer in the shape Nest gives a string.
 *
 * @example
 * responseOf(rejection); // { type: '…#quota-exceeded', title: '…', status: 429, detail: '…', 'violated-policies': […] }
 */
export function responseOf({ status, contentType, body }: RateLimitRejection): Record<string, unknown> {
  return contentType.includes('json') ? JSON.parse(body) : { statusCode: status, message: body };
}
