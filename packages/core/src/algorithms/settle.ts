/**
 * One operation on all of a key's policies at once, whatever their algorithms: read, bring forward,
 * judge and write, all or none — and the limiter's ban, if it has one. The memory store runs this; the
 * Redis script does the same in Lua (`stores/redis/script/generate.ts`), step for step.
 */

import type { BanRule } from '../model/ban.js';
import type { ResolvedPolicy } from '../model/policy.js';
import type { BucketMode } from '../model/store.js';
import type { StateFields } from './algorithm.js';
import { admitted, banIdleMs, bannedUntil, currentBan, refused } from './ban/ban.js';
import { ALGORITHMS } from './registry.js';

/** The outcome of {@link settlePolicies}, besides the states it left in place. */
export interface Settled {
  readonly applied: boolean;
  /** When the client's ban ends (ms since the epoch); 0 when it is not banned. */
  readonly bannedUntilMs: number;
  /**
   * What to store: the states for this many ms; 0 to forget the key (every state is as good as fresh);
   * `undefined` when nothing changed and nothing is to be written.
   */
  readonly keepMs: number | undefined;
}

/** How many numbers a key's states take: every policy's, then the ban's two. */
export function stateFieldCount(policies: readonly ResolvedPolicy[], ban: BanRule | undefined): number {
  let fields = ban === undefined ? 0 : 2;
  for (const policy of policies) fields += ALGORITHMS[policy.algorithm].fields;
  return fields;
}

/**
 * Decides one operation at `nowMs` on a key's states in `st` (every policy's fields in policy order, then
 * the ban's; `stored` false: none yet, all fresh), bringing them forward and changing them in place. The
 * caller reads the states before and stores them as `keepMs` says after, with nothing in between.
 * - `consume`: charge `cost` to every policy if it fits in all, else charge none (and, with a ban, count
 *   the refusal: `ban.after` in a row ban the client for `ban.durationMs`, during which it is refused);
 * - `peek`: say whether it would fit, charging nothing;
 * - `refund`: give `cost` back to every policy;
 * - `penalty`: charge `cost` to every policy whether it fits or not (a client can owe).
 */
export function settlePolicies(
  policies: readonly ResolvedPolicy[],
  st: StateFields,
  stored: boolean,
  cost: number,
  mode: BucketMode,
  nowMs: number,
  ban?: BanRule,
): Settled {
  const count = policies.length;
  let fits = true;
  let o = 0;
  for (let i = 0; i < count; i++) {
    const policy = policies[i] as ResolvedPolicy;
    const algorithm = ALGORITHMS[policy.algorithm];
    algorithm.current(policy, st, o, stored, nowMs);
    if (fits && !algorithm.fits(policy, st, o, cost, nowMs)) fits = false;
    o += algorithm.fields;
  }
  const checks = mode === 'consume' || mode === 'peek';
  if (ban !== undefined) {
    currentBan(st, o, stored, nowMs);
    if (checks && bannedUntil(st, o) > nowMs) {
      return { applied: false, bannedUntilMs: bannedUntil(st, o), keepMs: undefined };
    }
  }
  if (mode === 'peek' || (mode === 'consume' && !fits && ban === undefined)) {
    return { applied: fits, bannedUntilMs: 0, keepMs: undefined };
  }
  let applied = true;
  if (mode === 'consume' && !fits) {
    // A refusal changes nothing but the ban's count; the policies are written as they stand now.
    applied = false;
    refused(ban as BanRule, st, o, nowMs);
  } else {
    const sign = mode === 'refund' ? 1 : -1;
    for (let i = 0, q = 0; i < count; i++) {
      const policy = policies[i] as ResolvedPolicy;
      const algorithm = ALGORITHMS[policy.algorithm];
      algorithm.apply(policy, st, q, cost, sign);
      q += algorithm.fields;
    }
    if (ban !== undefined && mode === 'consume') admitted(st, o);
  }
  // Kept until every state says no more than a fresh one; forgotten when they already do.
  let idleMs = ban === undefined ? 0 : banIdleMs(st, o, nowMs);
  for (let i = 0, q = 0; i < count; i++) {
    const policy = policies[i] as ResolvedPolicy;
    const algorithm = ALGORITHMS[policy.algorithm];
    idleMs = Math.max(idleMs, algorithm.idleMs(policy, st, q, nowMs));
    q += algorithm.fields;
  }
  return {
    applied,
    bannedUntilMs: ban === undefined ? 0 : bannedUntil(st, o),
    keepMs: Math.max(0, idleMs),
  };
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
