/**
 * What becomes of a request's charge once its response has ended. Counting only some responses
 * (`skipSuccessfulRequests`, `skipFailedRequests`): a request is charged when it arrives, like any other,
 * and its charge is given back if its response is one the limiter does not count. A metered cost
 * (`cost: { reserve, settle }`): the reserved cost is charged when it arrives, and settled to the true
 * cost. Charging first keeps the limit exact under concurrency: N parallel failed logins never get past
 * a limit of 5, since each holds its token until it is judged.
 */

import { reasonOf, type Warnings } from '../../support/warnings.js';
import type { NodeResponse, RateLimitInfo } from '../answer/outcome.js';
import type { MeteredCost, SuccessTest } from '../options/option-types.js';
import { RequestRateLimit, refund, settle as settleCharge } from './request-rate-limit.js';
import { whenResponseEnds } from './response-end.js';

/** What the response rule needs from the options. */
export interface ResponseCountingOptions<Req, Res> {
  readonly skipSuccessfulRequests: boolean;
  readonly skipFailedRequests: boolean;
  readonly requestWasSuccessful: SuccessTest<Req, Res> | undefined;
  /** With `cost: { reserve, settle }`: the request's true cost, asked once its response has ended. */
  readonly settle: SettleCost<Req, Res> | undefined;
}

/** A metered cost's `settle`. */
type SettleCost<Req, Res> = MeteredCost<Req, Res>['settle'];

/**
 * After an allowed request: watches `raw` (the Node.js response under the framework's) until the
 * response ends, then gives the charge back if it should not count, or settles a metered cost. Adapters
 * call it for every allowed request; it does nothing when the limiter counts every request as charged.
 */
export type CountByResponse<Req, Res> = (
  info: RateLimitInfo,
  request: Req,
  response: Res,
  raw: NodeResponse,
) => void;

/**
 * The rule, built once; `undefined` when every request counts at its charged cost, so the check pays
 * nothing for it. How a response ends decides:
 * - **completed** (the app called `end()`, including after streaming a body, and an error the framework
 *   answered, 500 by default): judged by `requestWasSuccessful` (status below 400 by default), then
 *   given back whole when `skipSuccessfulRequests` or `skipFailedRequests` says so;
 * - **aborted** (the connection closed before the app finished: the client went away, or the server
 *   destroyed the socket mid-stream): counted, under either option. Nobody can tell whether it
 *   succeeded, and a client must not be able to erase its charge by hanging up.
 * A request that counts and has a metered cost is then settled: `settle` says its true cost (after an
 * abort, with whatever the app has recorded by then), and the difference is charged or given back. A
 * request given back whole is not settled: the refund wins.
 * A refund or settle that fails (the store is down) leaves the request counted at what it was charged
 * and is logged as `TOLLGATE_REFUND_FAILED`; a `requestWasSuccessful` or `settle` that throws (or a
 * `settle` that returns no cost) does the same and is logged as `TOLLGATE_CALLBACK_FAILED`. None of it
 * reaches the request or the process.
 */
export function responseCounting<Req, Res>(
  options: ResponseCountingOptions<Req, Res>,
  warnings: Warnings,
): CountByResponse<Req, Res> | undefined {
  const { skipSuccessfulRequests, skipFailedRequests, requestWasSuccessful, settle } = options;
  const judges = skipSuccessfulRequests || skipFailedRequests;
  if (!judges && settle === undefined) return undefined;

  /** Whether the ended response is one the limiter does not count; an aborted one always counts. */
  async function uncounted(request: Req, response: Res, raw: NodeResponse): Promise<boolean> {
    if (!judges || !raw.writableEnded) return false;
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
      return false;
    }
    return successful ? skipSuccessfulRequests : skipFailedRequests;
  }

  async function giveBack(info: RequestRateLimit): Promise<void> {
    try {
      await refund(info);
    } catch (error) {
      warnings.failure(
        'TOLLGATE_REFUND_FAILED',
        `could not give a request's tokens back, so it stays counted: ${reasonOf(error)}`,
      );
    }
  }

  /** The app's `settle`, checked: the true cost, or `undefined` (logged) to keep the reserved one. */
  async function trueCost(
    settleCost: SettleCost<Req, Res>,
    request: Req,
    response: Res,
  ): Promise<number | undefined> {
    const kept = 'so the request stays charged its reserved cost';
    let cost: unknown;
    try {
      cost = await settleCost(request, response);
    } catch (error) {
      warnings.failure('TOLLGATE_CALLBACK_FAILED', `settle failed, ${kept}: ${reasonOf(error)}`);
      return undefined;
    }
    if (typeof cost === 'number' && Number.isFinite(cost) && cost >= 0) return cost;
    const got = `returned ${typeof cost === 'string' ? `'${cost}'` : String(cost)}`;
    warnings.failure('TOLLGATE_CALLBACK_FAILED', `settle ${got}, not a cost of 0 or more, ${kept}`);
    return undefined;
  }

  async function afterResponse(info: RequestRateLimit, request: Req, response: Res, raw: NodeResponse) {
    if (await uncounted(request, response, raw)) return giveBack(info);
    if (settle === undefined) return;
    const cost = await trueCost(settle, request, response);
    if (cost === undefined) return;
    try {
      await settleCharge(info, cost);
    } catch (error) {
      warnings.failure(
        'TOLLGATE_REFUND_FAILED',
        `could not settle a request's cost, so it stays charged its reserved cost: ${reasonOf(error)}`,
      );
    }
  }

  return function countByResponse(info, request, response, raw) {
    // Only this module's own infos carry a charge; one a caller made up is never refunded.
    if (!(info instanceof RequestRateLimit) || !info.decision.allowed) return;
    // 'close' comes once: after 'finish' for a completed response, alone for an aborted one. The work is
    // returned, for a runtime that must be told to wait for it (a Web answer's `waitUntil`).
    whenResponseEnds(raw, () => afterResponse(info, request, response, raw));
  };
}
