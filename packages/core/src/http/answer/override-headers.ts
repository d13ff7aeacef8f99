/**
 * Headers for a limiter with overrides: the quota `RateLimit-Policy` advertises is the one a decision was
 * made by, a client's override included, and not only the policies' own.
 */
import { withLimits } from '../../algorithms/policies.js';
import type { Decision } from '../../model/decision.js';
import type { ResolvedPolicy } from '../../model/policy.js';
import type { HeaderWriter } from './headers.js';

/** Writers kept for overridden limits: few clients have an override, and a writer is rebuilt cheaply. */
const MAX_OVERRIDE_WRITERS = 100;

/**
 * A writer that uses `writerFor(policies)` for decisions by the policies' own limits, and one built for
 * the limits a decision shows when an override made them.
 *
 * @example
 * const writeHeaders = followingOverrides((p) => createHeaderWriter('draft-11', false, p), limiter.policies);
 */
export function followingOverrides(
  writerFor: (policies: readonly ResolvedPolicy[]) => HeaderWriter,
  policies: readonly ResolvedPolicy[],
): HeaderWriter {
  const own = writerFor(policies);
  const overridden = new Map<string, HeaderWriter>();
  return (decision) => {
    if (decidedByOwnLimits(decision, policies)) return own(decision);
    const limits = decision.policies.map(({ limit, capacity }) => `${limit}/${capacity}`).join(' ');
    let writer = overridden.get(limits);
    if (writer === undefined) {
      const decidedBy = policies.map((policy, i) => {
        const { limit, capacity } = decision.policies[i] ?? policy;
        return withLimits(policy, limit, capacity, 'override');
      });
      if (overridden.size >= MAX_OVERRIDE_WRITERS) overridden.clear();
      writer = writerFor(decidedBy);
      overridden.set(limits, writer);
    }
    return writer(decision);
  };
}

function decidedByOwnLimits(decision: Decision, policies: readonly ResolvedPolicy[]): boolean {
  for (let i = 0; i < policies.length; i++) {
    const policy = policies[i] as ResolvedPolicy;
    const decided = decision.policies[i];
    if (decided !== undefined && (decided.limit !== policy.limit || decided.capacity !== policy.capacity)) {
      return false;
    }
  }
  return true;
}
