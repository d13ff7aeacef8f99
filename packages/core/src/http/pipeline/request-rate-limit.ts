/**
 * The {@link RateLimitInfo} of one request: built once per check, shared by the handler, the message,
 * the callbacks and the request property, and the only way to give the request's charge back or to
 * settle it.
 */

import type { Limiter } from '../../limiter/limiter.js';
import type { Reservation } from '../../limiter/reservation.js';
import type { Decision } from '../../model/decision.js';
import type { RateLimitInfo } from '../answer/outcome.js';

/** Gives a request's charge back: reachable only from this module's importers, never from the app. */
let refundCharge: (info: RequestRateLimit) => Promise<void>;
/** Settles a metered request's reservation at its true cost: likewise. */
let settleCharge: (info: RequestRateLimit, actualCost: number) => Promise<void>;

/**
 * One request's rate limit. The numbers are getters over the decision, so a request pays for none it
 * does not read.
 */
export class RequestRateLimit implements RateLimitInfo {
  readonly limiter: string;
  readonly decision: Decision;
  readonly key: string;
  readonly dryRun: boolean;
  /** The core limiter that decided, for `resetKey` and refunds. */
  readonly #decidedBy: Limiter;
  /** With a metered cost (`cost: { reserve, settle }`): the charge to settle once the response has ended. */
  readonly #reservation: Reservation | undefined;

  static {
    // Where the charge was made is the only place it may be given back: the insurance limiter for a
    // degraded decision, else the store. A denied request was charged nothing. A reservation knows both,
    // and gives back or settles at most once. A request that waited (`delay`) has the decision of its
    // turn: it was charged `waitedMs` before.
    refundCharge = async (info) => {
      if (info.#reservation !== undefined) return info.#reservation.cancel();
      const { allowed, cost, degraded, decidedAtMs, waitedMs = 0 } = info.decision;
      const chargedAtMs = decidedAtMs - waitedMs;
      if (allowed) await info.#decidedBy.refund(info.key, cost, { degraded, chargedAtMs });
    };
    settleCharge = async (info, actualCost) => {
      await info.#reservation?.settle(actualCost);
    };
  }

  constructor(
    limiterName: string,
    decision: Decision,
    key: string,
    decidedBy: Limiter,
    dryRun: boolean,
    reservation?: Reservation,
  ) {
    this.limiter = limiterName;
    this.decision = decision;
    this.key = key;
    this.dryRun = dryRun;
    this.#decidedBy = decidedBy;
    this.#reservation = reservation;
  }

  get limit(): number {
    return this.decision.decidedBy.limit;
  }

  get remaining(): number {
    return this.decision.decidedBy.remaining;
  }

  get used(): number {
    return this.decision.decidedBy.capacity - this.decision.decidedBy.remaining;
  }

  get resetMs(): number {
    return this.decision.decidedBy.resetMs;
  }

  get resetTime(): Date {
    return new Date(this.decision.decidedAtMs + this.decision.decidedBy.resetMs);
  }

  resetKey(): Promise<void> {
    return this.#decidedBy.reset(this.key);
  }

  /** The numbers as plain data, for logs and JSON answers. */
  toJSON() {
    const { limiter, key, limit, remaining, used, resetMs, resetTime } = this;
    return { limiter, key, limit, remaining, used, resetMs, resetTime: resetTime.toISOString() };
  }
}

/**
 * Gives the request's charge back where it was made, once the caller has made sure it is given back at
 * most once. Rejects when the store fails.
 *
 * @example
 * await refund(outcome.info as RequestRateLimit);
 */
export function refund(info: RequestRateLimit): Promise<void> {
  return refundCharge(info);
}

/**
 * Settles the request's reservation (`cost: { reserve, settle }`) at `actualCost`, a finite number of 0
 * or more: the difference is charged or given back where the reservation was charged, once; a request
 * without a reservation has nothing to settle. Rejects when the store fails.
 *
 * @example
 * await settle(outcome.info as RequestRateLimit, 420);
 */
export function settle(info: RequestRateLimit, actualCost: number): Promise<void> {
  return settleCharge(info, actualCost);
}
