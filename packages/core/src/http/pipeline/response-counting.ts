/**
 * Counting only some responses (`skipSuccessfulRequests`, `skipFailedRequests`): a request is charged
 * when it arrives, like any other, and its charge is given back once its response has ended, if that
 * response is one the limiter does not count. Charging first keeps the limit exact under concurrency:
 * N parallel failed logins never get past a limit of 5, since each holds its token until it is judged.
 */

import { reasonOf, type Warnings } from '../../support/warnings.js';
import type { NodeResponse, RateLimitInfo } from '../answer/outcome.js';
import type { SuccessTest } from '../options/option-types.js';
import { RequestRateLimit, refund } from './request-rate-limit.js';
import { whenResponseEnds } from './response-end.js';

/** What the response rule needs from the options. */
export interface ResponseCountingOptions<Req, Res> {
  readonly skipSuccessfulRequests: boolean;
  readonly skipFailedRequests: boolean;
  readonly requestWasSuccessful: SuccessTest<Req, Res> | undefined;
}

/**
 * After an allowed request: watches `raw` (the Node.js response under the framework's) until the
 * response ends, then gives the charge back if it should not count. Adapters call it for every allowed
 * request; it does nothing when the limiter counts every request.
 */
export type CountByResponse<Req, Res> = (
  info: RateLimitInfo,
  request: Req,
  response: Res,
  raw: NodeResponse,
) => void;

/**
 * The rule, built once; `undefined` when every request counts, so the check pays nothing for it. How a
 * response ends decides:
 * - **completed** (the app called `end()`, including after streaming a body, and an error the framework
 *   answered, 500 by default): judged by `requestWasSuccessful` (status below 400 by default), then
 *   given back when `skipSuccessfulRequests` or `skipFailedRequests` says so;
 * - **aborted** (the connection closed before the app finished: the client went away, or the server
 *   destroyed the socket mid-stream): counted, under either option. Nobody can tell whether it
 *   succeeded, and a client must not be able to erase its charge by hanging up.
 * A refund that fails (the store is down) leaves the request counted and is logged as
 * `TOLLGATE_REFUND_FAILED`; a `requestWasSuccessful` that throws leaves it counted and is logged as
 * `TOLLGATE_CALLBACK_FAILED`. Neither reaches the request or the process.
 */
export function responseCounting<Req, Res>(
  options: ResponseCountingOptions<Req, Res>,
  warnings: Warnings,
): CountByResponse<Req, Res> | undefined {
  const { skipSuccessfulRequests, skipFailedRequests, requestWasSuccessful } = options;
  if (!skipSuccessfulRequests && !skipFailedRequests) return undefined;

  async function judge(info: RequestRateLimit, request: Req, response: Res, raw: NodeResponse) {
    if (!raw.writableEnded) return;
    let successful: boolean;
    try {
      successful = Boolean(
        requestWasSuccessful ? await requestWasSuccessful(request, response) : raw.statusCode < 400,
      );
    } catch (error) {
      warnings.failure(
        'TOLLGATE_CALLBACK_FAILED',
        `requestWasSuccessful failed, so the request stays counted: ${reasonOf(error)}`,
      );
      return;
    }
    if (successful ? !skipSuccessfulRequests : !skipFailedRequests) return;
    try {
      await refund(info);
    } catch (error) {
      warnings.failure(
        'TOLLGATE_REFUND_FAILED',
        `could not give a request's tokens back, so it stays counted: ${reasonOf(error)}`,
      );
    }
  }

  return function countByResponse(info, request, response, raw) {
    // Only this module's own infos carry a charge; one a caller made up is never refunded.
    if (!(info instanceof RequestRateLimit) || !info.decision.allowed) return;
    // 'close' comes once: after 'finish' for a completed response, alone for an aborted one.
    whenResponseEnds(raw, () => void judge(info, request, response, raw));
  };
}
