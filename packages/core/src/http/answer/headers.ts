/**
 * Rate-limit response headers, one pure function per profile, and the writer a limiter uses: its
 * profile's, without the headers switched off, following the limits an override gave. Values are data:
 * adapters only write them.
 *
 * Second counts are whole seconds, rounded up, so a client that waits them is never early.
 */
import { withLimits } from '../../algorithms/policies.js';
import type { Decision, PolicyDecision } from '../../model/decision.js';
import type { ResolvedPolicy } from '../../model/policy.js';

/**
 * Which standard headers to send.
 * - `'draft-11'` (default): `RateLimit-Policy` and `RateLimit` structured fields of
 *   draft-ietf-httpapi-ratelimit-headers-11, one list member per policy — the only profile that can
 *   describe several policies at once, which Tollgate limiters often have.
 * - `'draft-10'`: the same fields (draft-11 kept draft-10's syntax); the same output.
 * - `'draft-7'`: one `RateLimit: limit=…, remaining=…, reset=…` field plus `RateLimit-Policy`.
 * - `'draft-6'`: `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`, `RateLimit-Policy`.
 * - `false`: none (`Retry-After` is still sent on 429).
 * The older drafts describe one policy: the one that decided.
 */
export type HeaderProfile = 'draft-11' | 'draft-10' | 'draft-7' | 'draft-6' | false;

/** The header profiles, for validation and docs. */
export const HEADER_PROFILES: readonly HeaderProfile[] = [
  'draft-11',
  'draft-10',
  'draft-7',
  'draft-6',
  false,
];

/**
 * The extension parameter that carries a bucket's capacity (its `burst`) when it differs from the advertised
 * quota. The drafts ask for implementation-specific parameters to carry a vendor prefix.
 */
export const BURST_PARAMETER = 'tollgate-burst';

/** Writes the headers of one decision; built once per set of policies. */
export type HeaderWriter = (decision: Decision) => Record<string, string>;

/**
 * Builds the header writer for a profile and a set of policies; constant parts are computed here, once.
 * `legacy` adds `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` — the reset as Unix
 * epoch seconds, as GitHub's API sends it (not the seconds-from-now of the drafts), by the store's clock.
 */
export function createHeaderWriter(
  profile: HeaderProfile,
  legacy: boolean,
  policies: readonly ResolvedPolicy[],
): HeaderWriter {
  const standard = standardWriter(profile, policies);
  return function writeHeaders(decision) {
    const retryAfter = retryAfterSeconds(decision);
    const headers = standard(decision, retryAfter);
    if (legacy) {
      const { limit, remaining, resetMs } = decision.decidedBy;
      headers['X-RateLimit-Limit'] = String(limit);
      headers['X-RateLimit-Remaining'] = String(remaining);
      headers['X-RateLimit-Reset'] = String(Math.ceil((decision.decidedAtMs + resetMs) / 1000));
    }
    if (retryAfter !== undefined) headers['Retry-After'] = String(retryAfter);
    return headers;
  };
}

/**
 * The `Retry-After` of a denied decision in whole seconds: the wait until every policy holds the cost,
 * rounded up, and never earlier than the deciding policy's `t` (draft-11 §6: Retry-After SHOULD NOT end
 * before the effective window). `undefined` when allowed, or when no wait will do (the cost exceeds a
 * capacity).
 *
 * @example
 * retryAfterSeconds(decision); // 20
 */
export function retryAfterSeconds(decision: Decision): number | undefined {
  if (decision.allowed || decision.retryAfterMs === undefined) return undefined;
  // With whole costs the deciding policy's next token never comes after the wait, so this is the wait;
  // only a fractional cost can make `t` the larger of the two.
  return Math.max(seconds(decision.retryAfterMs), effectiveWindow(decision.decidedBy));
}

type StandardWriter = (decision: Decision, retryAfter: number | undefined) => Record<string, string>;

function standardWriter(profile: HeaderProfile, policies: readonly ResolvedPolicy[]): StandardWriter {
  const quotas = new Map(policies.map((p) => [p.name, advertisedQuota(p)]));
  const quotaOf = (p: PolicyDecision) => quotas.get(p.policy) as AdvertisedQuota;
  // draft-6/7 `reset` refers to the same point in time as `Retry-After` on a 429, as both drafts ask.
  const resetOf = (p: PolicyDecision, retryAfter: number | undefined) => retryAfter ?? seconds(p.resetMs);
  switch (profile) {
    case 'draft-11':
    case 'draft-10': {
      const policyField = [...quotas.values()].map((quota) => quota.listMember).join(', ');
      return (decision) => ({ 'RateLimit-Policy': policyField, RateLimit: listField(decision.policies) });
    }
    case 'draft-7':
      return ({ decidedBy: p }, retryAfter) => ({
        'RateLimit-Policy': quotaOf(p).item,
        RateLimit: `limit=${quotaOf(p).quota}, remaining=${p.remaining}, reset=${resetOf(p, retryAfter)}`,
      });
    case 'draft-6':
      return ({ decidedBy: p }, retryAfter) => ({
        'RateLimit-Policy': quotaOf(p).item,
        'RateLimit-Limit': String(quotaOf(p).quota),
        'RateLimit-Remaining': String(p.remaining),
        'RateLimit-Reset': String(resetOf(p, retryAfter)),
      });
    default:
      return () => ({});
  }
}

/**
 * The draft-10/11 `RateLimit` field: one list member per policy. Joined as it goes, with no array of the
 * members in between: it is written on every answer.
 */
function listField(policies: readonly PolicyDecision[]): string {
  let field = '';
  for (let i = 0; i < policies.length; i++) {
    const p = policies[i] as PolicyDecision;
    field += `${i === 0 ? '' : ', '}"${p.policy}";r=${p.remaining};t=${effectiveWindow(p)}`;
  }
  return field;
}

/** A policy as the headers advertise it: a quota per window of whole seconds, true to the bucket. */
interface AdvertisedQuota {
  /** `q`, the quota units that refill per advertised window. */
  readonly quota: number;
  /** The draft-10/11 `RateLimit-Policy` member: `"name";q=…;w=…`. */
  readonly listMember: string;
  /** The draft-6/7 `RateLimit-Policy` item: `q;w=…`. */
  readonly item: string;
}

/**
 * The drafts' windows are whole seconds, and a window rounded up would promise the wrong rate
 * (`10 per 500ms` as `q=10;w=1` is half the real rate). So `w` is the shortest whole number of seconds
 * that holds a whole number of windows, and `q` what refills in it: `10 per 500ms` is `q=20;w=1`,
 * `10 per 1500ms` is `q=20;w=3`. Whole-second windows are unchanged. Exact for every window. The
 * capacity is added as the burst parameter when it differs from `q`, since `r` can then exceed `q`, or
 * never reach it.
 */
function advertisedQuota(policy: ResolvedPolicy): AdvertisedQuota {
  const divisor = greatestCommonDivisor(policy.windowMs, 1000);
  const quota = (policy.limit * 1000) / divisor;
  const window = `w=${policy.windowMs / divisor}`;
  const burst = policy.capacity === quota ? '' : `;${BURST_PARAMETER}=${policy.capacity}`;
  return {
    quota,
    listMember: `"${policy.name}";q=${quota};${window}${burst}`,
    item: `${quota};${window}${burst}`,
  };
}

/**
 * `t` of draft-10/11 for a token bucket: seconds until `r` grows, rounded up. Within it the client can use
 * no more than `r` (draft-11 §4.1.2); after it, more quota is available (draft-10 §4.1.2). For a full
 * bucket, the time a spent token takes to come back.
 */
function effectiveWindow(policy: PolicyDecision): number {
  return seconds(policy.nextTokenMs);
}

/**
 * `write` without the headers switched off: `offWhenAllowed` on allowed decisions, `offWhenLimited` on
 * the others. `write` itself when nothing is switched off, so the default costs nothing.
 *
 * @example
 * const writeHeaders = withSwitches(createHeaderWriter('draft-11', false, policies), undefined, ['Retry-After']);
 */
export function withSwitches(
  write: HeaderWriter,
  offWhenAllowed: readonly string[] | undefined,
  offWhenLimited: readonly string[] | undefined,
): HeaderWriter {
  if (offWhenAllowed === undefined && offWhenLimited === undefined) return write;
  return function writeSwitchedHeaders(decision) {
    const headers = write(decision);
    for (const name of (decision.allowed ? offWhenAllowed : offWhenLimited) ?? []) delete headers[name];
    return headers;
  };
}

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

function seconds(ms: number): number {
  return Math.ceil(ms / 1000);
}

function greatestCommonDivisor(a: number, b: number): number {
  return b === 0 ? a : greatestCommonDivisor(b, a % b);
}
