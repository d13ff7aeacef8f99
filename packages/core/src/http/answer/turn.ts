/** A request that waited for its turn (`delay`): its decision as it stands at its turn, for its headers and info. */
import type { Decision, PolicyDecision } from '../../model/decision.js';

/**
 * `decision` as it stands at the request's turn, `waitedMs` after the store made it: `decidedAtMs` is
 * the turn, and each policy's times are counted from it. A waiting request is charged into debt, so
 * at its decision its bucket is owed and the wait until the next token includes its own; at its turn
 * its charge is covered. Its headers say what holds when it goes on. A decision that did not wait is
 * returned as it is.
 *
 * @example
 * decisionAtTurn(waited).decidedBy.nextTokenMs; // 10_000 where the decision said 20_000, 10 s before
 */
export function decisionAtTurn(decision: Decision): Decision {
  const waitedMs = decision.waitedMs ?? 0;
  if (waitedMs <= 0 || !decision.allowed) return decision;
  const policies = decision.policies.map((part) => tokenBucketLater(part, waitedMs));
  // The deciding policy is one of the decision's policies: the same one, later.
  const decidedBy = policies[decision.policies.indexOf(decision.decidedBy)];
  return {
    ...decision,
    decidedBy: decidedBy ?? tokenBucketLater(decision.decidedBy, waitedMs),
    policies,
    decidedAtMs: decision.decidedAtMs + waitedMs,
  };
}

/**
 * A token bucket's part `elapsedMs` later, with nothing charged in between: it refills one token every
 * `windowMs / limit` ms, evenly, up to its capacity. Only token buckets wait (see `delay`).
 */
function tokenBucketLater(part: PolicyDecision, elapsedMs: number): PolicyDecision {
  const { remaining, nextTokenMs, capacity, retryAfterMs } = part;
  const tokenMs = part.windowMs / part.limit;
  let nowRemaining = remaining;
  let nextMs = nextTokenMs - elapsedMs;
  if (nextMs <= 0) {
    // Whole tokens came back in the meantime: the first at `nextTokenMs`, then one every `tokenMs`.
    const gained = Math.floor(-nextMs / tokenMs) + 1;
    nowRemaining = Math.min(capacity, remaining + gained);
    // A full bucket's next token is the time a spent one takes to come back, as a decision says it.
    nextMs = nowRemaining >= capacity ? tokenMs : nextMs + gained * tokenMs;
  }
  return {
    ...part,
    remaining: nowRemaining,
    resetMs: Math.max(0, part.resetMs - elapsedMs),
    nextTokenMs: Math.ceil(nextMs),
    retryAfterMs: retryAfterMs === undefined ? undefined : Math.max(0, retryAfterMs - elapsedMs),
  };
}
