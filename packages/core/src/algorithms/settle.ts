/**
 * One operation on all of a key's policies at once, whatever their algorithms: read, bring forward,
 * judge and write, all or none — and the limiter's ban, if it has one. The memory store runs this; the
 * Redis script does the same in Lua.
 */
import type { ResolvedPolicy } from '../policy.js';
import type { BucketMode } from '../store.js';
import type { PolicyState } from './algorithm.js';
import {
  admitted,
  type BanRule,
  type BanState,
  banIdleMs,
  currentBan,
  isBanned,
  refused,
} from './ban/ban.js';
import { ALGORITHMS } from './registry.js';

/** What to store after an operation: these states for `ttlMs`, or nothing (`null`: all are idle). */
export type StatesWrite = { readonly states: number[][]; readonly ttlMs: number } | null;

/** The outcome of {@link settlePolicies}: the decision, the states, and what to write (if anything). */
export interface SettledPolicies {
  readonly applied: boolean;
  /** Each policy's state after the operation, in policy order. */
  readonly states: PolicyState[];
  /** When the client's ban ends (ms since the epoch); 0 when it is not banned. */
  readonly bannedUntilMs: number;
  /** `undefined` when nothing changed and nothing is to be written. */
  readonly write: StatesWrite | undefined;
}

/**
 * Decides one operation at `nowMs` on the states stored for a key (`undefined`: none; with a `ban`, its
 * state follows the policies'). Pure: the caller reads the states before and stores `write` after, with
 * nothing in between.
 * - `consume`: charge `cost` to every policy if it fits in all, else charge none (and, with a ban, count
 *   the refusal: `ban.after` in a row ban the client for `ban.durationMs`, during which it is refused);
 * - `peek`: say whether it would fit, charging nothing;
 * - `refund`: give `cost` back to every policy;
 * - `penalty`: charge `cost` to every policy whether it fits or not (a client can owe).
 */
export function settlePolicies(
  policies: readonly ResolvedPolicy[],
  stored: readonly (readonly number[])[] | undefined,
  cost: number,
  mode: BucketMode,
  nowMs: number,
  ban?: BanRule,
): SettledPolicies {
  const count = policies.length;
  const states = new Array<PolicyState>(count);
  let fits = true;
  for (let i = 0; i < count; i++) {
    const policy = policies[i] as ResolvedPolicy;
    const algorithm = ALGORITHMS[policy.algorithm];
    const state = algorithm.current(policy, stored?.[i], nowMs);
    states[i] = state;
    if (!algorithm.fits(policy, state, cost, nowMs)) fits = false;
  }
  const banState = ban === undefined ? undefined : currentBan(stored?.[count], nowMs);
  const checks = mode === 'consume' || mode === 'peek';
  if (banState !== undefined && checks && isBanned(banState, nowMs)) {
    return { applied: false, states, bannedUntilMs: banState[1], write: undefined };
  }
  if (mode === 'peek' || (mode === 'consume' && !fits && ban === undefined)) {
    return { applied: fits, states, bannedUntilMs: 0, write: undefined };
  }
  if (mode === 'consume' && !fits) {
    // A refusal changes nothing but the ban's count; the policies are written as they stand now.
    const next = refused(ban as BanRule, banState as BanState, nowMs);
    return { applied: false, states, bannedUntilMs: next[1], write: writeOf(policies, states, next, nowMs) };
  }
  const sign = mode === 'refund' ? 1 : -1;
  for (let i = 0; i < count; i++) {
    const policy = policies[i] as ResolvedPolicy;
    states[i] = ALGORITHMS[policy.algorithm].apply(policy, states[i] as PolicyState, cost, sign);
  }
  const next = banState === undefined ? undefined : mode === 'consume' ? admitted() : banState;
  return { applied: true, states, bannedUntilMs: 0, write: writeOf(policies, states, next, nowMs) };
}

/**
 * What to store: the states (and the ban's) until all of them say no more than fresh ones; nothing when
 * they already do.
 */
function writeOf(
  policies: readonly ResolvedPolicy[],
  states: PolicyState[],
  banState: BanState | undefined,
  nowMs: number,
): StatesWrite {
  let idleMs = banState === undefined ? 0 : banIdleMs(banState, nowMs);
  for (let i = 0; i < policies.length; i++) {
    const policy = policies[i] as ResolvedPolicy;
    idleMs = Math.max(idleMs, ALGORITHMS[policy.algorithm].idleMs(policy, states[i] as PolicyState, nowMs));
  }
  if (idleMs <= 0) return null;
  return { states: banState === undefined ? states : [...states, banState], ttlMs: idleMs };
}
