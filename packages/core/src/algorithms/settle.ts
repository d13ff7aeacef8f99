/**
 * One operation on all of a key's policies at once, whatever their algorithms: read, bring forward,
 * judge and write, all or none — and the limiter's ban, backoff and continueExceeding, if it has them.
 * The memory store runs this; the Redis script does the same in Lua (`stores/redis/script/generate.ts`),
 * step for step.
 */

import type { BanRule } from '../model/ban.js';
import type { ResolvedPolicy } from '../model/policy.js';
import type { BucketMode } from '../model/store.js';
import type { Algorithm, StateFields } from './algorithm.js';
import {
  admittedBackoff,
  BACKOFF_FIELDS,
  backedOff,
  backoffIdleMs,
  backoffUntil,
  currentBackoff,
} from './backoff/backoff.js';
import { admitted, banIdleMs, bannedUntil, currentBan, refused } from './ban/ban.js';
import { ALGORITHMS } from './registry.js';

/** The outcome of {@link settlePolicies}, besides the states it left in place. */
export interface Settled {
  readonly applied: boolean;
  /** When the client's ban ends (ms since the epoch); 0 when it is not banned. */
  readonly bannedUntilMs: number;
  /** Until when exponential backoff holds the client back (ms since the epoch); 0 or past: it does not. */
  readonly backoffUntilMs: number;
  /**
   * What to store: the states for this many ms; 0 to forget the key (every state is as good as fresh);
   * `undefined` when nothing changed and nothing is to be written.
   */
  readonly keepMs: number | undefined;
}

/** How many numbers a key's states take: every policy's, then the ban's two, then the backoff's three. */
export function stateFieldCount(policies: readonly ResolvedPolicy[], rule: BanRule | undefined): number {
  let fields =
    (rule !== undefined && rule.after > 0 ? 2 : 0) + (rule?.exponentialBackoff ? BACKOFF_FIELDS : 0);
  for (const policy of policies) fields += ALGORITHMS[policy.algorithm].fields;
  return fields;
}

/**
 * Decides one operation at `nowMs` on a key's states in `st` (every policy's fields in policy order, then
 * the ban's, then the backoff's; `stored` false: none yet, all fresh), bringing them forward and changing
 * them in place. The caller reads the states before and stores them as `keepMs` says after, with nothing
 * in between.
 * - `consume`: charge `cost` to every policy if it fits in all, else charge none; with a `rule`, a
 *   refusal is counted: `ban.after` in a row ban the client for `ban.durationMs`, during which it is
 *   refused; `exponentialBackoff` holds it back for twice as long at each one (`backoff/backoff.ts`);
 *   `continueExceeding` restarts every policy it did not fit (each algorithm's `restart`);
 * - `peek`: say whether it would fit, charging nothing;
 * - `refund`: give back to every policy what is left at `nowMs` of a charge of `cost` made at `sinceMs`
 *   (`nowMs` when not given: the whole cost);
 * - `penalty`: charge `cost` to every policy whether it fits or not (a client can owe).
 *
 * A `consume` with `maxWaitMs` above 0 may wait: it fits when every policy can be charged now and be
 * covered within `maxWaitMs` (each algorithm's `fitsWithin`; a policy whose algorithm cannot owe never
 * fits), and is then charged into debt. The caller's turn is when the last policy's debt is repaid
 * (`turnMs`).
 */
export function settlePolicies(
  policies: readonly ResolvedPolicy[],
  st: StateFields,
  stored: boolean,
  cost: number,
  mode: BucketMode,
  nowMs: number,
  rule?: BanRule,
  sinceMs: number = nowMs,
  maxWaitMs = 0,
): Settled {
  const count = policies.length;
  const waits = maxWaitMs > 0 && mode === 'consume';
  let fits = true;
  let o = 0;
  for (let i = 0; i < count; i++) {
    const policy = policies[i] as ResolvedPolicy;
    const algorithm = ALGORITHMS[policy.algorithm];
    algorithm.current(policy, st, o, stored, nowMs);
    if (fits)
      fits = waits
        ? fitsWithin(algorithm, policy, st, o, cost, maxWaitMs)
        : algorithm.fits(policy, st, o, cost, nowMs);
    o += algorithm.fields;
  }
  const checks = mode === 'consume' || mode === 'peek';
  const ban = rule !== undefined && rule.after > 0 ? rule : undefined;
  const backoff = rule?.exponentialBackoff === true;
  const b = ban === undefined ? o : o + 2; // where the backoff's fields begin
  const kept =
    stored && !asForgotten(policies, st, ban === undefined ? undefined : o, backoff ? b : undefined, nowMs);
  if (backoff) currentBackoff(st, b, kept);
  if (ban !== undefined) {
    currentBan(st, o, kept, nowMs);
    if (checks && bannedUntil(st, o) > nowMs) {
      return {
        applied: false,
        bannedUntilMs: bannedUntil(st, o),
        backoffUntilMs: backoff ? backoffUntil(st, b) : 0,
        keepMs: undefined,
      };
    }
  }
  // Held back: refused whatever the policies say, and (for a consume) one more refusal in the row.
  if (checks && backoff && backoffUntil(st, b) > nowMs) fits = false;
  if (mode === 'peek' || (mode === 'consume' && !fits && rule === undefined)) {
    return {
      applied: fits,
      bannedUntilMs: 0,
      backoffUntilMs: backoff ? backoffUntil(st, b) : 0,
      keepMs: undefined,
    };
  }
  let applied = true;
  if (mode === 'consume' && !fits) {
    // A refusal changes nothing but what the rule says; the policies are written as they stand now.
    applied = false;
    refusedBy(rule as BanRule, policies, st, o, cost, nowMs);
  } else {
    for (let i = 0, q = 0; i < count; i++) {
      const policy = policies[i] as ResolvedPolicy;
      const algorithm = ALGORITHMS[policy.algorithm];
      if (mode === 'refund') algorithm.refund(policy, st, q, cost, sinceMs, nowMs);
      else algorithm.apply(policy, st, q, cost);
      q += algorithm.fields;
    }
    if (ban !== undefined && mode === 'consume') admitted(st, o);
    if (backoff && mode === 'consume') admittedBackoff(st, b);
  }
  // Kept until every state says no more than a fresh one; forgotten when they already do.
  let idleMs = ban === undefined ? 0 : banIdleMs(st, o, nowMs);
  if (backoff) idleMs = Math.max(idleMs, backoffIdleMs(st, b, nowMs));
  for (let i = 0, q = 0; i < count; i++) {
    const policy = policies[i] as ResolvedPolicy;
    const algorithm = ALGORITHMS[policy.algorithm];
    idleMs = Math.max(idleMs, algorithm.idleMs(policy, st, q, nowMs));
    q += algorithm.fields;
  }
  return {
    applied,
    bannedUntilMs: ban === undefined ? 0 : bannedUntil(st, o),
    backoffUntilMs: backoff ? backoffUntil(st, b) : 0,
    keepMs: Math.max(0, idleMs),
  };
}

/**
 * Whether a key's states, its policies' brought to `nowMs`, are as good as forgotten: every policy's says
 * no more than a fresh one, and no ban (at `banAt`) or hold (the backoff's, at `backoffAt`) is in force.
 * The key was kept until then and no longer, so its refusals in a row start again here, whether its store
 * has forgotten it yet or not (Redis forgets by its own clock, which an injected one may run ahead of).
 */
function asForgotten(
  policies: readonly ResolvedPolicy[],
  st: StateFields,
  banAt: number | undefined,
  backoffAt: number | undefined,
  nowMs: number,
): boolean {
  const counting =
    (banAt !== undefined && (st[banAt] as number) > 0) ||
    (backoffAt !== undefined && (st[backoffAt] as number) > 0);
  if (!counting) return false; // no count to end: read as it is
  if (banAt !== undefined && (st[banAt + 1] as number) > nowMs) return false;
  if (backoffAt !== undefined && (st[backoffAt + 1] as number) > nowMs) return false;
  for (let i = 0, q = 0; i < policies.length; i++) {
    const policy = policies[i] as ResolvedPolicy;
    const algorithm = ALGORITHMS[policy.algorithm];
    if (algorithm.idleMs(policy, st, q, nowMs) > 0) return false;
    q += algorithm.fields;
  }
  return true;
}

/** Whether `cost` fits the policy's state at `o` within `maxWaitMs`; never for an algorithm that cannot owe. */
function fitsWithin(
  algorithm: Algorithm,
  policy: ResolvedPolicy,
  st: StateFields,
  o: number,
  cost: number,
  maxWaitMs: number,
): boolean {
  return algorithm.fitsWithin?.(policy, st, o, cost, maxWaitMs) ?? false;
}

/**
 * Ms from when the states were brought to until every policy's debt is repaid: the turn of the caller
 * whose waiting consume made the last charge. 0 when no policy owes.
 */
export function turnMs(policies: readonly ResolvedPolicy[], states: readonly (readonly number[])[]): number {
  let waitMs = 0;
  for (let i = 0; i < policies.length; i++) {
    const policy = policies[i] as ResolvedPolicy;
    const owed = ALGORITHMS[policy.algorithm].owedMs?.(policy, states[i] as readonly number[], 0) ?? 0;
    if (owed > waitMs) waitMs = owed;
  }
  return waitMs;
}

/**
 * A refused consume under `rule`, its states at `o` (the ban's, then the backoff's) changed in place: the
 * ban counts it, `continueExceeding` restarts each policy the cost did not fit, and then the backoff holds
 * the client back, from the policies' wait as the restarts left it (not for a cost more than some policy
 * holds: no wait will do).
 */
function refusedBy(
  rule: BanRule,
  policies: readonly ResolvedPolicy[],
  st: StateFields,
  o: number,
  cost: number,
  nowMs: number,
): void {
  if (rule.after > 0) refused(rule, st, o, nowMs);
  if (rule.continueExceeding) {
    for (let i = 0, q = 0; i < policies.length; i++) {
      const policy = policies[i] as ResolvedPolicy;
      const algorithm = ALGORITHMS[policy.algorithm];
      if (!algorithm.fits(policy, st, q, cost, nowMs)) algorithm.restart(policy, st, q, cost, nowMs);
      q += algorithm.fields;
    }
  }
  if (rule.exponentialBackoff) {
    let waitMs: number | undefined = 0;
    for (let i = 0, q = 0; i < policies.length; i++) {
      const policy = policies[i] as ResolvedPolicy;
      const algorithm = ALGORITHMS[policy.algorithm];
      const policyWaitMs = algorithm.waitMs(policy, st, q, cost, nowMs);
      waitMs =
        policyWaitMs === undefined || waitMs === undefined ? undefined : Math.max(waitMs, policyWaitMs);
      q += algorithm.fields;
    }
    if (waitMs !== undefined) backedOff(st, rule.after > 0 ? o + 2 : o, nowMs, waitMs);
  }
}

/**
 * A key's limits changed from `from` to `to` (the same policies, other limits): every policy's state in
 * `st` that was written before `beforeMs`, brought forward under `from` until `endsMs`, is put in `to`'s
 * terms in place, keeping what the client has used (each algorithm's `rebase`).
 */
export function rebasePolicies(
  from: readonly ResolvedPolicy[],
  to: readonly ResolvedPolicy[],
  st: StateFields,
  endsMs: number,
  beforeMs: number,
): void {
  for (let i = 0, o = 0; i < to.length; i++) {
    const policy = to[i] as ResolvedPolicy;
    const algorithm = ALGORITHMS[policy.algorithm];
    algorithm.rebase(from[i] as ResolvedPolicy, policy, st, o, endsMs, beforeMs);
    o += algorithm.fields;
  }
}

/** Each policy's state, copied out of `st` as a store answers them. */
export function policyStates(policies: readonly ResolvedPolicy[], st: StateFields): number[][] {
  const states = new Array<number[]>(policies.length);
  for (let i = 0, o = 0; i < policies.length; i++) {
    const { fields } = ALGORITHMS[(policies[i] as ResolvedPolicy).algorithm];
    const state = new Array<number>(fields);
    for (let k = 0; k < fields; k++) state[k] = st[o + k] as number;
    states[i] = state;
    o += fields;
  }
  return states;
}
