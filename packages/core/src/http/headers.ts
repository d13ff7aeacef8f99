/**
 * Rate-limit response headers, one pure function per profile. Values are data: adapters only write them.
 *
 * Reset and window values are whole seconds, rounded up, so a client that waits them is never early.
 */
import type { Decision, PolicyDecision } from '../decision.js';
import type { ResolvedPolicy } from '../policy.js';

/**
 * Which standard headers to send.
 * - `'draft-10'` (default): `RateLimit-Policy` and `RateLimit` structured fields of
 *   draft-ietf-httpapi-ratelimit-headers-10, one list member per policy — the only profile that can
 *   describe several policies at once, which Tollgate limiters often have.
 * - `'draft-7'`: one `RateLimit: limit=…, remaining=…, reset=…` field plus `RateLimit-Policy`.
 * - `'draft-6'`: `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`, `RateLimit-Policy`.
 * - `false`: none (`Retry-After` is still sent on 429).
 * The older drafts describe one policy: the one that decided.
 */
export type HeaderProfile = 'draft-10' | 'draft-7' | 'draft-6' | false;

/** The header profiles, for validation and docs. */
export const HEADER_PROFILES: readonly HeaderProfile[] = ['draft-10', 'draft-7', 'draft-6', false];

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
    const headers = standard(decision);
    if (legacy) {
      const { limit, remaining, resetMs } = decision.decidedBy;
      headers['X-RateLimit-Limit'] = String(limit);
      headers['X-RateLimit-Remaining'] = String(remaining);
      headers['X-RateLimit-Reset'] = String(Math.ceil((decision.decidedAtMs + resetMs) / 1000));
    }
    if (!decision.allowed && decision.retryAfterMs !== undefined) {
      headers['Retry-After'] = String(seconds(decision.retryAfterMs));
    }
    return headers;
  };
}

function standardWriter(
  profile: HeaderProfile,
  policies: readonly ResolvedPolicy[],
): (decision: Decision) => Record<string, string> {
  const policyOf = new Map(policies.map((p) => [p.name, `${p.limit};w=${seconds(p.windowMs)}`]));
  switch (profile) {
    case 'draft-10': {
      const policyField = policies.map((p) => `"${p.name}";q=${p.limit};w=${seconds(p.windowMs)}`).join(', ');
      return (decision) => ({
        'RateLimit-Policy': policyField,
        RateLimit: decision.policies
          .map((p) => `"${p.policy}";r=${p.remaining};t=${resetSeconds(p)}`)
          .join(', '),
      });
    }
    case 'draft-7':
      return ({ decidedBy: p }) => ({
        'RateLimit-Policy': policyOf.get(p.policy) as string,
        RateLimit: `limit=${p.limit}, remaining=${p.remaining}, reset=${resetSeconds(p)}`,
      });
    case 'draft-6':
      return ({ decidedBy: p }) => ({
        'RateLimit-Policy': policyOf.get(p.policy) as string,
        'RateLimit-Limit': String(p.limit),
        'RateLimit-Remaining': String(p.remaining),
        'RateLimit-Reset': String(resetSeconds(p)),
      });
    default:
      return () => ({});
  }
}

/**
 * The headers to set when an earlier limiter already set some on this response (Express and Koa run a
 * route's limiter after the app-wide one). The draft-10 fields are lists, so both limiters' policies are
 * kept; `Retry-After` keeps the longer wait; any other field is the later limiter's.
 *
 * @example
 * res.set(stackHeaders(outcome.headers, (name) => res.get(name)));
 */
export function stackHeaders(
  headers: Readonly<Record<string, string>>,
  earlier: (name: string) => unknown,
): Record<string, string> {
  const stacked = { ...headers };
  for (const name of ['RateLimit-Policy', 'RateLimit']) {
    const before = earlier(name);
    const now = headers[name];
    if (isDraft10List(before) && isDraft10List(now)) stacked[name] = `${before}, ${now}`;
  }
  const retryBefore = Number(earlier('Retry-After'));
  const retryNow = headers['Retry-After'];
  if (retryNow !== undefined && retryBefore > Number(retryNow)) stacked['Retry-After'] = String(retryBefore);
  return stacked;
}

/** A draft-10 field value: a list of quoted policy names with parameters. */
function isDraft10List(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith('"');
}

function resetSeconds(policy: PolicyDecision): number {
  return seconds(policy.resetMs);
}

function seconds(ms: number): number {
  return Math.ceil(ms / 1000);
}
