/**
 * From a decision to what the adapter does with the request: go on with headers, or be refused (429, 403,
 * a `RateLimitError`). In dry run a request is never refused, and gets no headers unless asked for.
 */
import type { Reservation } from '../../limiter/reservation.js';
import type { Decision } from '../../model/decision.js';
import type { Warnings } from '../../support/warnings.js';
import { notify } from '../answer/callbacks.js';
import type { RateLimitOutcome } from '../answer/outcome.js';
import { refusalStatus } from '../answer/problem.js';
import { RateLimitError } from '../answer/rate-limit-error.js';
import type { ResolvedRateLimitOptions } from '../options/options.js';
import type { BoundLimiter } from './policy-limiters.js';
import { RequestRateLimit } from './request-rate-limit.js';

/** The headers of an answer that sends none (a dry run, by default): one frozen object for all. */
const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** Turns one request's decision into its outcome. */
export type Responder<Req> = (
  request: Req,
  decision: Decision,
  identity: string,
  bound: BoundLimiter,
  dryRun: boolean,
  reservation: Reservation | undefined,
) => RateLimitOutcome;

/**
 * The responder of an HTTP limiter, built once from its options.
 *
 * @example
 * const respond = responder(config, warnings);
 * return respond(request, decision, identity, bound, false, undefined); // { kind: 'allowed', … }
 */
export function responder<Req>(config: ResolvedRateLimitOptions<Req>, warnings: Warnings): Responder<Req> {
  const { onExceeding, onExceeded, onNearLimit } = config;

  // The last refusal's headers: the deny cache answers a client hammering while refused with one
  // decision object many times a millisecond, and its headers are the same each time.
  let refused: { decision: Decision; bound: BoundLimiter; headers: Record<string, string> } | undefined;

  /** The headers of a decision: none in dry run unless `dryRunHeaders`, and then no `Retry-After`. */
  function headersOf(bound: BoundLimiter, decision: Decision, dryRun: boolean): Record<string, string> {
    if (dryRun && !config.dryRunHeaders) return NO_HEADERS;
    if (!dryRun && refused?.decision === decision && refused.bound === bound) return refused.headers;
    const headers = (decision.degraded ? bound.writeDegradedHeaders : bound.writeHeaders)(decision);
    // Retry-After belongs to refusals; a request that goes on was not refused.
    if (dryRun) delete headers['Retry-After'];
    else if (!decision.allowed && !config.throwOnLimit) {
      refused = { decision, bound, headers: Object.freeze(headers) };
    }
    return headers;
  }

  /** Logs a request the dry run let through, at most once per 10 s (never one line per request). */
  function wouldHaveRefused(decision: Decision): void {
    const why =
      decision.reason === 'cost-exceeds-capacity'
        ? 'its cost exceeds a capacity'
        : `policy ${decision.decidedBy.policy}`;
    warnings.throttled(
      'TOLLGATE_DRY_RUN_LIMITED',
      'warn',
      `dry run: limiter ${config.name} would have refused a request (${why}) and let it through`,
    );
  }

  return function respond(request, decision, identity, bound, dryRun, reservation) {
    const info = new RequestRateLimit(config.name, decision, identity, bound.limiter, dryRun, reservation);
    const headers = headersOf(bound, decision, dryRun);
    const profile = headers === NO_HEADERS ? false : config.headers;
    if (decision.allowed) {
      if (onExceeding) notify(onExceeding, 'onExceeding', request, info, warnings);
      if (onNearLimit && decision.nearLimit) notify(onNearLimit, 'onNearLimit', request, info, warnings);
      return { kind: 'allowed', headers, profile, info };
    }
    if (onExceeded) notify(onExceeded, 'onExceeded', request, info, warnings);
    if (dryRun) {
      wouldHaveRefused(decision);
      return { kind: 'allowed', headers, profile, info };
    }
    if (config.throwOnLimit) {
      const error = new RateLimitError(headers, info, refusalStatus(decision, config.statusCode));
      return { kind: 'error', headers, profile, error, info };
    }
    return { kind: 'limited', headers, profile, info };
  };
}
