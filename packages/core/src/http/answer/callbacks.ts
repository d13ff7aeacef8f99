/** The app's event callbacks (`onExceeding`, `onExceeded`), called so that they can never break a request. */

import { reasonOf, type Warnings } from '../../support/warnings.js';
import type { RateLimitInfo } from './outcome.js';

/** Told about a request and its rate limit; may be async. Its result is ignored. */
export type RateLimitCallback<Req> = (request: Req, info: RateLimitInfo) => unknown;

/**
 * Calls `callback` without waiting for it: a slow callback does not slow the request. A callback that
 * throws, or returns a promise that rejects, is logged as `TOLLGATE_CALLBACK_FAILED` (at most once per
 * 10 seconds per limiter) and changes nothing for the request.
 *
 * @example
 * notify(config.onExceeded, 'onExceeded', request, info, warnings);
 */
export function notify<Req>(
  callback: RateLimitCallback<Req>,
  name: string,
  request: Req,
  info: RateLimitInfo,
  warnings: Warnings,
): void {
  const failed = (error: unknown) =>
    warnings.failure('TOLLGATE_CALLBACK_FAILED', `${name} failed; the request went on: ${reasonOf(error)}`);
  try {
    const result = callback(request, info);
    if (isThenable(result)) result.then(undefined, failed);
  } catch (error) {
    failed(error);
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}
