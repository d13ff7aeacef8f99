/**
 * Whether a key is refusing requests, which puts it in the tier the memory store evicts last. Not read from
 * its idle time: an exhausted window is the oldest one, so it is soonest idle of all.
 */

import { ALGORITHMS } from '../../algorithms/registry.js';
import type { ResolvedPolicy } from '../../model/policy.js';

/**
 * Whether a key whose states (brought to `nowMs`, as `settlePolicies` leaves them) are in `st` would refuse
 * the same request again now: it is banned, or some policy lacks `cost`. Run only when a key is written:
 * one `fits` per policy, a few comparisons on the check path.
 *
 * @example
 * const exhausted = refusesAgain(policies, work, cost, nowMs, settled.bannedUntilMs);
 */
export function refusesAgain(
  policies: readonly ResolvedPolicy[],
  st: Float64Array,
  cost: number,
  nowMs: number,
  bannedUntilMs: number,
): boolean {
  if (bannedUntilMs > nowMs) return true;
  for (let i = 0, o = 0; i < policies.length; i++) {
    const policy = policies[i] as ResolvedPolicy;
    const algorithm = ALGORITHMS[policy.algorithm];
    if (!algorithm.fits(policy, st, o, cost, nowMs)) return true;
    o += algorithm.fields;
  }
  return false;
}
