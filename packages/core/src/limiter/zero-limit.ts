/**
 * `limit: 0`: a limiter that refuses every request by itself. There is nothing to count, so it never asks
 * the store, and the token-bucket maths (which divides by the limit) never sees a zero.
 */

import { LimiterEvents } from '../diagnostics/publish.js';
import type { Decision, PolicyDecision } from '../model/decision.js';
import type { Policy, ResolvedPolicy } from '../model/policy.js';
import { type Duration, formatDuration, parseDuration } from '../support/duration.js';
import { TollgateOptionError } from '../support/option-error.js';
import { describeValue, ownField } from '../support/value-checks.js';
import { bucketOwner } from './bucket-key.js';
import {
  CONSUME_OPTIONS,
  checkCallOptions,
  PEEK_OPTIONS,
  REFUND_OPTIONS,
  RESERVE_OPTIONS,
  SCHEDULE_OPTIONS,
} from './call-options.js';
import type { ConsumeOptions, Limiter } from './limiter.js';
import { reservationOf } from './reservation.js';
import { reservationIdOf, type SettleResult } from './reservation-ids.js';
import { TurnRefusedError } from './turn-refused-error.js';

/**
 * A value of the `limit` option, or of a `limit` function: a positive whole number, or 0 to refuse every
 * request. Anything else is a `TypeError` naming `what`.
 *
 * @example
 * limitOrZero(0, '@tollgate/express: limit'); // 0
 */
export function limitOrZero(value: unknown, what: string): number {
  if (value === 0) return 0;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new TollgateOptionError(
      `${what} must be a positive whole number, or 0 to refuse every request; got ${describeValue(value)}`,
    );
  }
  return value;
}

/**
 * Whether `policies` is the policy of `limit: 0`. Only the `limit` option (or a `limit` function's result)
 * may be 0; the policies of `createLimiter` and of the `policies` option keep positive limits.
 */
export function isZeroLimit(policies: Policy | readonly Policy[]): policies is Policy {
  return !Array.isArray(policies) && (policies as Policy).limit === 0;
}

/**
 * The policy of `limit: 0`, resolved: a bucket that holds nothing, named like any other (`'0-per-1m'`).
 *
 * @example
 * resolveZeroLimit({ limit: 0, window: '1m' }, '@tollgate/express: ');
 * // { name: '0-per-1m', algorithm: 'token-bucket', limit: 0, windowMs: 60000, capacity: 0, capacityUnits: 0 }
 */
export function resolveZeroLimit(policy: Policy, prefix: string): ResolvedPolicy {
  if (policy.burst !== undefined) {
    throw new TollgateOptionError(
      `${prefix}burst cannot be combined with limit 0, which refuses every request; leave burst out`,
    );
  }
  const windowMs = parseDuration(policy.window as Duration, `${prefix}window`);
  return Object.freeze({
    name: `0-per-${formatDuration(windowMs)}`,
    algorithm: policy.algorithm ?? 'token-bucket',
    limit: 0,
    windowMs,
    capacity: 0,
    capacityUnits: 0,
  });
}

/**
 * A {@link Limiter} for `limit: 0`: every `consume` and `peek` is `'limited'`, with `retryAfterMs`
 * `undefined` since no wait will do, so the 429 carries no `Retry-After`. Not `'cost-exceeds-capacity'`:
 * that is the request asking too much, this is the limiter refusing everyone, whatever the cost.
 * `refund`, `reward`, `reset` and a reservation's `settle` have nothing to do; `penalty` changes nothing either. Its `consume`
 * decisions are published as a store's are, under `name`, with no store latency.
 *
 * @example
 * const limiter = zeroLimiter(resolveZeroLimit({ limit: 0, window: '1m' }, ''), store.clock, 'closed');
 * (await limiter.consume('anyone')).allowed; // false
 */
export function zeroLimiter(
  policy: ResolvedPolicy,
  clock: (() => number) | undefined,
  name: string,
): Limiter {
  const now = clock ?? Date.now;
  // A bucket of capacity 0 is always full: nothing left, nothing to wait for.
  const state: PolicyDecision = Object.freeze({
    policy: policy.name,
    algorithm: policy.algorithm,
    limit: 0,
    windowMs: policy.windowMs,
    capacity: 0,
    remaining: 0,
    resetMs: 0,
    // Never, in truth; the window keeps `t` finite and true to draft-11: within it, at most `r` (0) requests.
    nextTokenMs: policy.windowMs,
    retryAfterMs: undefined,
    nearLimit: false,
  });
  const policies = Object.freeze([state]);
  const events = new LimiterEvents(name);
  const refuse = async (_key: string, options?: ConsumeOptions): Promise<Decision> => ({
    allowed: false,
    reason: 'limited',
    cost: ownField(options, 'cost') ?? 1,
    retryAfterMs: undefined,
    decidedBy: state,
    policies,
    decidedAtMs: now(),
    degraded: false,
    nearLimit: false,
  });
  async function consume(key: string, options?: ConsumeOptions): Promise<Decision> {
    checkCallOptions(options, CONSUME_OPTIONS, 'consume');
    const decision = await refuse(key, options);
    if (events.decisionsObserved) {
      events.decided(bucketOwner(name, key), decision, ownField(options, 'dryRun') === true, Number.NaN);
    }
    return decision;
  }
  return {
    policies: Object.freeze([policy]),
    insurancePolicies: Object.freeze([policy]), // it never asks the store, so it never needs insurance
    consume,
    peek: async (key, options) => {
      checkCallOptions(options, PEEK_OPTIONS, 'peek');
      return refuse(key, options);
    },
    // No turn ever comes: the function is never run.
    schedule: async (key, _fn, options) => {
      checkCallOptions(options, SCHEDULE_OPTIONS, 'schedule');
      throw new TurnRefusedError(await consume(key, { cost: ownField(options, 'cost') ?? 1 }));
    },
    // Refused, so charged nothing: its settle and cancel have nothing to do.
    reserve: async (key, cost, options) => {
      checkCallOptions(options, RESERVE_OPTIONS, 'reserve');
      const id = ownField(options, 'id');
      const dryRun = ownField(options, 'dryRun');
      const decision = await consume(key, dryRun === undefined ? { cost } : { cost, dryRun });
      const reservation = reservationOf(decision, async () => {}, 0);
      return id === undefined ? reservation : { ...reservation, id: reservationIdOf(id) };
    },
    // No reservation is ever made, so none is known.
    settle: async () => UNKNOWN,
    cancel: async () => UNKNOWN,
    penalty: (_key, cost) => refuse(_key, { cost: cost ?? 1 }),
    refund: async (_key, _cost, options) => checkCallOptions(options, REFUND_OPTIONS, 'refund'),
    reward: async () => {},
    reset: async () => {},
    setOverride: noOverrides,
    removeOverride: noOverrides,
    getOverride: noOverrides,
  };
}

const UNKNOWN: SettleResult = Object.freeze({ settled: false, reason: 'unknown' });

/** A limit of 0 never asks the store, where overrides are read: there is nothing to override. */
async function noOverrides(): Promise<never> {
  throw new TollgateOptionError('a limit of 0 refuses every request by itself and holds no overrides');
}
