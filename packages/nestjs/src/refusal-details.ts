/** What a refusal outside an HTTP answer carries: the limiter's body as an object, with Tollgate's code and the wait. */
import { type RateLimitInfo, type RateLimitRejection, retryAfterSeconds } from '@tollgate/core';
import { responseOf } from './rate-limit-exception.js';

/**
 * The details of a refusal where no HTTP answer carries it: a GraphQL error's `extensions`, a
 * `WsException`'s or an `RpcException`'s error. The limiter's body as `RateLimitException.getResponse()`
 * gives it (RFC 9457 problem details by default: `type`, `title`, `status`, `detail`,
 * `violated-policies`), with:
 * - `code`: `'TOLLGATE_RATE_LIMITED'`, or `'TOLLGATE_COST_EXCEEDS_CAPACITY'` when no wait will do
 *   (status 403);
 * - `retryAfter`: the seconds to wait, as `Retry-After` says them, and `retryAfterMs`, the wait in
 *   milliseconds (as `@tollgate/graphql`'s refusals give it); both absent when no wait will do.
 *
 * @example
 * const details: RateLimitDetails = {
 *   code: 'TOLLGATE_RATE_LIMITED',
 *   retryAfter: 9,
 *   retryAfterMs: 8400,
 *   status: 429,
 *   detail: 'Too many requests: retry in 9 seconds.',
 * };
 */
export interface RateLimitDetails {
  readonly code: 'TOLLGATE_RATE_LIMITED' | 'TOLLGATE_COST_EXCEEDS_CAPACITY';
  readonly retryAfter?: number;
  readonly retryAfterMs?: number;
  readonly [field: string]: unknown;
}

/** The code of a refusal: the same as `RateLimitException.code`. */
export function refusalCode(info: RateLimitInfo | undefined): RateLimitDetails['code'] {
  return info?.decision.reason === 'cost-exceeds-capacity'
    ? 'TOLLGATE_COST_EXCEEDS_CAPACITY'
    : 'TOLLGATE_RATE_LIMITED';
}

/**
 * The details of a refusal: its body's fields, then `code`, `retryAfter` and `retryAfterMs` (Tollgate's,
 * over any the `message` option gave).
 */
export function refusalDetails(rejection: RateLimitRejection, info: RateLimitInfo): RateLimitDetails {
  const retryAfter = retryAfterSeconds(info.decision);
  const { retryAfterMs } = info.decision;
  return {
    ...responseOf(rejection),
    code: refusalCode(info),
    ...(retryAfter === undefined || retryAfterMs === undefined ? {} : { retryAfter, retryAfterMs }),
  };
}

/**
 * A sentence for the refusal, for an error's `message`: the body's `detail` (problem details), else its
 * `message` (a text `message` option, or an object's), else its `title`.
 */
export function refusalSentence(details: RateLimitDetails): string {
  for (const field of ['detail', 'message', 'title'] as const) {
    const value = details[field];
    if (typeof value === 'string' && value !== '') return value;
  }
  return 'Too many requests';
}
