/**
 * One operation on all of a key's policies at once, whatever their algorithms: read, bring forward,
 * judge and write, all or none. The memory store runs this; the Redis script does the same in Lua.
 */
import type { ResolvedPolicy } from '../policy.js';
import type { BucketMode } from '../store.js';
import type { PolicyState } from './algorithm.js';
import { ALGORITHMS } from './registry.js';

/** What to store after an operation: these states for `ttlMs`, or nothing (`null`: all are idle). */
export type StatesWrite = { readonly states: PolicyState[]; readonly ttlMs: number } | null;

/** The outcome of {@link settlePolicies}: the decision, the states, and what to write (if anything). */
export interface SettledPolicies {
  readonly applied: boolean;
  /** Each policy's state after the operation, in policy order. */
  readonly states: PolicyState[];
  /** `undefined` when nothing changed and nothing is to be written. */
  readonly write: StatesWrite | undefined;
}

/**
 * Decides one operation at `nowMs` on the states stored for a key (`undefined`: none). Pure: the caller
 * reads the states before and stores `write` after, with nothing in between.
 * - `consume`: charge `cost` to every policy if it fits in all, else charge none;
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
  if (mode === 'peek' || (mode === 'consume' && !fits)) return { applied: fits, states, write: undefined };

  const sign = mode === 'refund' ? 1 : -1;
  let idleMs = 0;
  for (let i = 0; i < count; i++) {
    const policy = policies[i] as ResolvedPolicy;
    const algorithm = ALGORITHMS[policy.algorithm];
    const state = algorithm.apply(policy, states[i] as PolicyState, cost, sign);
    states[i] = state;
    idleMs = Math.max(idleMs, algorithm.idleMs(policy, state, nowMs));
  }
  // States that say no more than fresh ones carry no information; otherwise keep them until all do.
  return { applied: true, states, write: idleMs > 0 ? { states, ttlMs: idleMs } : null };
}
