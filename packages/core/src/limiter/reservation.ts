/**
 * Reservations: a cost charged before the work, as `consume` charges it, and settled to the true cost
 * once the work is done (`limiter.reserve`), for costs known only afterwards: the tokens an LLM answer
 * used, the CPU time a query took.
 */
import type { Decision } from '../model/decision.js';
import { TollgateArgumentError } from '../support/argument-error.js';

/**
 * A charge made by `limiter.reserve`, to be settled once the true cost is known. A reservation that is
 * never settled (the process crashed, the caller forgot) simply stays charged what was reserved.
 *
 * @example
 * const reservation = await limiter.reserve(`key:${apiKey}`, 1_000);
 * if (!reservation.decision.allowed) return tooManyTokens(reservation.decision.retryAfterMs);
 * const answer = await llm.complete(prompt);
 * await reservation.settle(answer.usage.totalTokens); // charges or gives back the difference
 */
export interface Reservation {
  /** The decision, as `consume` gives it: when `allowed`, the reserved cost was charged to every policy. */
  readonly decision: Decision;
  /**
   * The reservation's id, when `reserve` was given `id` (yours, or `true` for one made for you): pass
   * it, with the key, to `limiter.settle` or `limiter.cancel` in any process. `undefined` otherwise.
   */
  readonly id: string | undefined;
  /**
   * Settles at `actualCost` (a finite number, 0 or more) in one atomic store step: charges
   * `actualCost - reserved` more whether the buckets have it or not (as `penalty` does: a client can
   * owe, and waits longer), or gives `reserved - actualCost` back (as `refund` does, never beyond
   * capacity). Where the reservation was charged: the insurance limiter's buckets for a `degraded`
   * decision.
   *
   * Only the first `settle` or `cancel` does anything; later calls resolve at once, as does either on a
   * refused reservation (nothing was charged). Never throws: a bad `actualCost` rejects with a
   * `TypeError` and leaves the reservation open; a store failure rejects with the store's error, and
   * the reservation stays charged what was reserved (it is not retried: a store that failed late may
   * have applied it). A reservation with an `id` is settled by it, as `limiter.settle` does: after a
   * store failure it stays open here and may be settled again, since the store charges the difference
   * once whatever number of settles reach it.
   */
  settle(actualCost: number): Promise<void>;
  /** Gives the whole reservation back, as `settle(0)` would. Only the first `settle` or `cancel` counts. */
  cancel(): Promise<void>;
}

/**
 * Moves a reservation's charge by `tokens` in one store step: more (`tokens > 0`, a penalty) or less
 * (`tokens < 0`, a refund), where the reservation was charged.
 */
export type AdjustCharge = (tokens: number) => Promise<void>;

const DONE: Promise<void> = Promise.resolve();

/**
 * The reservation of `decision`. `maxExtraTokens` bounds what one settle charges beyond the reserved
 * cost, so that every bucket's level stays an integer the stores count exactly (see
 * {@link maxExtraTokensOf}).
 *
 * @example
 * const reservation = reservationOf(decision, (tokens) => adjust(key, tokens), maxExtraTokens);
 */
export function reservationOf(decision: Decision, adjust: AdjustCharge, maxExtraTokens: number): Reservation {
  // A refused reservation charged nothing, so there is nothing to settle.
  let open = decision.allowed;
  const reserved = decision.cost;
  const close = (tokens: number): Promise<void> => {
    open = false;
    if (tokens === 0) return DONE;
    try {
      return adjust(tokens);
    } catch (error) {
      return Promise.reject(error);
    }
  };
  return {
    decision,
    id: undefined,
    settle(actualCost) {
      if (!open) return DONE;
      if (typeof actualCost !== 'number' || !Number.isFinite(actualCost) || actualCost < 0) {
        return Promise.reject(
          new TollgateArgumentError(
            `actualCost must be a finite number, 0 or more; got ${String(actualCost)}`,
          ),
        );
      }
      return close(Math.min(actualCost - reserved, maxExtraTokens));
    },
    cancel: () => (open ? close(-reserved) : DONE),
  };
}

/**
 * The reservation of `decision`, made by id (`reserve`'s `id`): settled by `settleById`, which the store
 * applies once, however often it is called; open here until a settle or cancel succeeds.
 *
 * @example
 * const reservation = reservationById(decision, id, (actualCost) => limiter.settle(key, id, actualCost));
 */
export function reservationById(
  decision: Decision,
  id: string,
  settleById: (actualCost: number) => Promise<unknown>,
): Reservation {
  let open = decision.allowed;
  const close = async (actualCost: number): Promise<void> => {
    await settleById(actualCost);
    open = false;
  };
  return {
    decision,
    id,
    settle(actualCost) {
      if (!open) return DONE;
      if (typeof actualCost !== 'number' || !Number.isFinite(actualCost) || actualCost < 0) {
        return Promise.reject(
          new TollgateArgumentError(
            `actualCost must be a finite number, 0 or more; got ${String(actualCost)}`,
          ),
        );
      }
      return close(actualCost);
    },
    cancel: () => (open ? close(0) : DONE),
  };
}

/**
 * The most tokens one settle charges beyond the reserved cost: the largest charge whose units
 * (`tokens × windowMs`) still leave room for a full bucket within `Number.MAX_SAFE_INTEGER`, in every
 * policy. Beyond it a level could no longer be counted exactly (nor a Redis expiry be set); for a
 * one-minute window it is about 1.5 × 10¹¹ tokens, far past any real cost.
 *
 * @example
 * maxExtraTokensOf(limiter.policies); // 150119987479 for { limit: 100, window: '1m' }
 */
export function maxExtraTokensOf(
  policies: readonly { readonly windowMs: number; readonly capacityUnits: number }[],
): number {
  let most = Number.POSITIVE_INFINITY;
  for (const { windowMs, capacityUnits } of policies) {
    most = Math.min(most, Math.floor((Number.MAX_SAFE_INTEGER - capacityUnits) / windowMs));
  }
  return most;
}
