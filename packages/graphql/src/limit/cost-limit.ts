/**
 * The one lifecycle every server runs: estimate the operation, reserve the estimate (or refuse it)
 * before execution, count the actual cost from the result and settle it after. The servers' plugins
 * only read their context and write the answer.
 */
import { type Decision, type Reservation, TollgateOptionError } from '@tollgate/core';
import { createHeaderWriter } from '@tollgate/core/adapter';
import { type CostModel, costModel, type Estimate } from '../cost/cost-model.js';
import type { OperationToCost } from '../cost/operation.js';
import { type CostLimitOptions, type ResolvedCostLimit, resolveCostLimitOptions } from '../options.js';
import { CostLimitError } from './cost-limit-error.js';
import { FailureLog } from './failure-log.js';

/**
 * The budget after an operation, as Shopify's `throttleStatus` shows it, for the policy that decided:
 * its capacity, what it held when the estimate was reserved with the settled difference added back
 * (below 0 while the client owes; other operations in between are not counted), and how many points
 * come back a second.
 */
export interface ThrottleStatus {
  readonly maximumAvailable: number;
  readonly currentlyAvailable: number;
  readonly restoreRate: number;
}

/** What `extensions.cost` of a response holds. */
export interface CostExtension {
  /** The estimate, reserved before the operation ran. */
  readonly requested: number;
  /** The cost counted from the result, settled after it ran; absent when it did not run. */
  readonly actual?: number;
  /** The budget; absent when the store failed and the operation ran uncharged. */
  readonly throttleStatus?: ThrottleStatus;
}

/** An operation let through: run it, then {@link CostLimit.settle} it. */
export interface Admitted {
  readonly admitted: true;
  /** The rate-limit headers, for an HTTP answer. */
  readonly headers: Readonly<Record<string, string>>;
  readonly estimate: Estimate;
  /** `undefined` when the store failed and `onStoreError: 'allow'` let it run uncharged. */
  readonly decision: Decision | undefined;
  readonly reservation: Reservation | undefined;
}

/** An operation refused before it ran: answer `error`, with `headers` and `extensions.cost`. */
export interface Refused {
  readonly admitted: false;
  readonly headers: Readonly<Record<string, string>>;
  readonly error: CostLimitError;
  readonly extension: CostExtension;
}

/** The lifecycle of one server's operations. */
export interface CostLimit<Context> {
  /** Estimates `operation` and reserves the estimate on its key's budget, or refuses it. Charges at most once. */
  admit(operation: OperationToCost, context: Context): Promise<Admitted | Refused>;
  /** Counts the actual cost from the result's `data` and settles the reservation at it. Never rejects. */
  settle(admitted: Admitted, data: unknown): Promise<CostExtension>;
}

/**
 * The lifecycle under `options`; bad options throw here.
 *
 * @example
 * const limit = createCostLimit({ key: (context) => context.userId, limit: 1000, window: '1m' });
 * const admission = await limit.admit({ schema, document, variables }, context);
 */
export function createCostLimit<Context>(options: CostLimitOptions<Context>): CostLimit<Context> {
  const resolved: ResolvedCostLimit<Context> = resolveCostLimitOptions(options);
  const { limiter, onStoreError } = resolved;
  const model: CostModel = costModel(resolved.rules);
  const writeHeaders = createHeaderWriter(resolved.headers, resolved.legacyHeaders, limiter.policies);
  const failures = new FailureLog(resolved.logger);

  async function keyOf(context: Context): Promise<string> {
    const key = await resolved.key(context);
    if (typeof key !== 'string' || key === '') {
      throw new TollgateOptionError(
        `@tollgate/graphql: key must return a non-empty string; got ${String(key)}`,
      );
    }
    return key;
  }

  async function dryRunOf(context: Context): Promise<boolean> {
    const { dryRun } = resolved;
    return typeof dryRun === 'function' ? (await dryRun(context)) === true : dryRun;
  }

  return {
    async admit(operation, context) {
      const estimate = model.estimate(operation);
      const key = await keyOf(context);
      const dryRun = await dryRunOf(context);
      let reservation: Reservation;
      try {
        reservation = await limiter.reserve(key, estimate.cost, dryRun ? { dryRun } : undefined);
      } catch (error) {
        // With 'insurance' the core decides on its own when the store fails: what reaches here is ours.
        if (onStoreError === 'insurance' || error instanceof TypeError) throw error;
        failures.report(
          'TOLLGATE_STORE_ERROR',
          `the store failed; the operation was ${onStoreError === 'allow' ? 'let through uncharged' : 'refused'}`,
          error,
        );
        if (onStoreError === 'allow') {
          return { admitted: true, headers: {}, estimate, decision: undefined, reservation: undefined };
        }
        const error503 = new CostLimitError(estimate.cost, undefined, {});
        return { admitted: false, headers: {}, error: error503, extension: { requested: estimate.cost } };
      }
      const { decision } = reservation;
      const headers = writeHeaders(decision);
      if (decision.allowed || dryRun) return { admitted: true, headers, estimate, decision, reservation };
      return {
        admitted: false,
        headers,
        error: new CostLimitError(estimate.cost, decision, headers),
        extension: { requested: estimate.cost, throttleStatus: throttleStatusOf(decision, 0) },
      };
    },

    async settle(admitted, data) {
      const { estimate, decision, reservation } = admitted;
      const actual = model.actual(estimate, data);
      if (reservation !== undefined) {
        try {
          await reservation.settle(actual);
        } catch (error) {
          failures.report(
            'TOLLGATE_REFUND_FAILED',
            'could not settle an operation’s cost, so it stays charged its estimate',
            error,
          );
        }
      }
      const requested = estimate.cost;
      if (decision === undefined) return { requested, actual };
      const givenBack = decision.allowed ? requested - actual : 0;
      return { requested, actual, throttleStatus: throttleStatusOf(decision, givenBack) };
    },
  };
}

/** The deciding policy's budget once `givenBack` points (less than 0: charged more) were settled. */
function throttleStatusOf(decision: Decision, givenBack: number): ThrottleStatus {
  const { capacity, remaining, limit, windowMs } = decision.decidedBy;
  return {
    maximumAvailable: capacity,
    currentlyAvailable: Math.floor(Math.min(capacity, remaining + givenBack)),
    restoreRate: (limit * 1000) / windowMs,
  };
}
