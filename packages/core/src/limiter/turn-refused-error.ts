/** The error `limiter.schedule` rejects with when the call gets no turn within its `maxWait`. */
import type { Decision } from '../model/decision.js';
import { TollgateError } from '../support/tollgate-error.js';

/**
 * `limiter.schedule` got no turn within its `maxWait`, so its function was not run. A
 * {@link TollgateError} with `code` `'TOLLGATE_RATE_LIMITED'` (wait `decision.retryAfterMs` and try
 * again, or give it a longer `maxWait`), or `'TOLLGATE_COST_EXCEEDS_CAPACITY'` when the cost is more
 * than some policy can ever hold (no wait will do). Carries the limiter's decision.
 *
 * @example
 * try {
 *   await limiter.schedule('partner-api', () => partner.get('/orders'), { maxWait: '10s' });
 * } catch (error) {
 *   if (error instanceof TurnRefusedError) console.warn(`no turn within 10 s; next in ${error.decision.retryAfterMs} ms`);
 *   else throw error;
 * }
 */
export class TurnRefusedError extends TollgateError {
  override readonly name = 'TurnRefusedError';
  declare readonly code: 'TOLLGATE_RATE_LIMITED' | 'TOLLGATE_COST_EXCEEDS_CAPACITY';

  constructor(
    /** The refusal: its `retryAfterMs` is the wait a turn would have needed. */
    readonly decision: Decision,
  ) {
    const overCapacity = decision.reason === 'cost-exceeds-capacity';
    super(
      overCapacity ? 'TOLLGATE_COST_EXCEEDS_CAPACITY' : 'TOLLGATE_RATE_LIMITED',
      overCapacity
        ? `schedule: a cost of ${decision.cost} is more than policy '${decision.decidedBy.policy}' can ever hold`
        : `schedule: no turn within maxWait; the next one needed a wait of ${decision.retryAfterMs} ms`,
    );
  }
}
