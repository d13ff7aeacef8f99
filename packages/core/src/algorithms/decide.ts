/** Decisions: what a limiter answers, derived from the stored states by one function for every store. */
import type { Decision, PolicyDecision } from '../model/decision.js';
import type { ResolvedPolicy } from '../model/policy.js';
import type { BucketResult } from '../model/store.js';
import type { StateFields } from './algorithm.js';
import { ALGORITHMS } from './registry.js';

/** Builds the {@link Decision} for a store's answer. */
export function decide(policies: readonly ResolvedPolicy[], result: BucketResult, cost: number): Decision {
  const { applied, states, nowMs, bannedUntilMs = 0, backoffUntilMs = 0 } = result;
  // A loop, not map: this runs on every check.
  const described = partsFor(policies);
  for (let i = 0; i < policies.length; i++) {
    const policy = policies[i] as ResolvedPolicy;
    described[i] = ALGORITHMS[policy.algorithm].describe(
      policy,
      states[i] as readonly number[],
      0,
      cost,
      nowMs,
    );
  }
  return decisionOf(described, applied, nowMs, bannedUntilMs, backoffUntilMs, cost);
}

/**
 * {@link decide} from a key's state fields as `settlePolicies` leaves them (every policy's, in order),
 * read where they lie: the memory store answers this way, without copying its states out.
 */
export function decideFields(
  policies: readonly ResolvedPolicy[],
  st: StateFields,
  applied: boolean,
  nowMs: number,
  bannedUntilMs: number,
  backoffUntilMs: number,
  cost: number,
): Decision {
  const described = partsFor(policies);
  for (let i = 0, o = 0; i < policies.length; i++) {
    const policy = policies[i] as ResolvedPolicy;
    const algorithm = ALGORITHMS[policy.algorithm];
    described[i] = algorithm.describe(policy, st, o, cost, nowMs);
    o += algorithm.fields;
  }
  return decisionOf(described, applied, nowMs, bannedUntilMs, backoffUntilMs, cost);
}

/**
 * An array for every policy's part, of its final length: one grown by `push` from empty is given room
 * for 17 parts at the first one, garbage that every check would leave.
 */
function partsFor(policies: readonly ResolvedPolicy[]): PolicyDecision[] {
  return new Array<PolicyDecision>(policies.length);
}

/**
 * The decision from every policy's part: allowed only if the store applied it and no part forbids it. A
 * refusal waits as long as its longest part, ban and backoff included (a request too large for some
 * policy waits for nothing: no wait will do).
 */
function decisionOf(
  described: PolicyDecision[],
  applied: boolean,
  nowMs: number,
  bannedUntilMs: number,
  backoffUntilMs: number,
  cost: number,
): Decision {
  let overCapacity = false;
  let near = false;
  for (const state of described) {
    if (state.retryAfterMs === undefined) overCapacity = true;
    if (state.nearLimit) near = true;
  }
  const banned = bannedUntilMs > nowMs;
  const allowed = applied && !overCapacity && !banned;
  // A refused request is never near: whatever answers it (the store, the deny cache), it says so alike.
  if (near && !allowed) clearNearLimit(described);
  const decidedBy =
    described.length === 1 // most limiters have one policy
      ? (described[0] as PolicyDecision)
      : allowed
        ? fewestRemaining(described)
        : longestWait(described);
  return {
    allowed,
    reason: allowed ? 'allowed' : overCapacity ? 'cost-exceeds-capacity' : banned ? 'banned' : 'limited',
    cost,
    retryAfterMs: allowed
      ? 0
      : overCapacity
        ? decidedBy.retryAfterMs
        : Math.max(bannedUntilMs - nowMs, backoffUntilMs - nowMs, decidedBy.retryAfterMs ?? 0),
    decidedBy,
    policies: described,
    decidedAtMs: nowMs,
    degraded: false,
    nearLimit: near && allowed,
  };
}

/** Each policy's part without its near-limit mark, in place: only refused decisions come here. */
function clearNearLimit(described: PolicyDecision[]): void {
  for (let i = 0; i < described.length; i++) {
    const state = described[i] as PolicyDecision;
    if (state.nearLimit) described[i] = { ...state, nearLimit: false };
  }
}

function fewestRemaining(states: readonly PolicyDecision[]): PolicyDecision {
  return states.reduce((best, s) =>
    s.remaining < best.remaining || (s.remaining === best.remaining && s.resetMs > best.resetMs) ? s : best,
  );
}

function longestWait(states: readonly PolicyDecision[]): PolicyDecision {
  const waitOf = (s: PolicyDecision) => s.retryAfterMs ?? Number.POSITIVE_INFINITY;
  return states.reduce((worst, s) => (waitOf(s) > waitOf(worst) ? s : worst));
}
