/**
 * Headers on a response that an earlier limiter may already have written (Express and Koa run a route's
 * limiter after the app-wide one): which profile is there, and what the later limiter sets and removes.
 */
import type { HeaderProfile } from './headers.js';

/**
 * The fields each profile writes. A response carries the fields of one profile only, so when a later
 * limiter on the same response uses another one, the earlier limiter's fields are removed.
 */
const STANDARD_FIELDS: Record<ProfileFamily, readonly string[]> = {
  list: ['RateLimit-Policy', 'RateLimit'],
  'draft-7': ['RateLimit-Policy', 'RateLimit'],
  'draft-6': ['RateLimit-Policy', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
};

/** Profiles with the same fields and syntax: draft-10 and draft-11 are one family. */
type ProfileFamily = 'list' | 'draft-7' | 'draft-6';

function familyOf(profile: HeaderProfile | undefined): ProfileFamily | undefined {
  if (profile === 'draft-11' || profile === 'draft-10') return 'list';
  return profile || undefined;
}

/** A limiter's fields and the profile that wrote them, as a check's outcome carries them. */
export interface ProfiledHeaders {
  readonly headers: Readonly<Record<string, string>>;
  /** The profile of `headers`; absent or `false` when they hold no standard fields. */
  readonly profile?: HeaderProfile;
}

/** What earlier limiters left on a response. */
export interface EarlierHeaders {
  /**
   * The profile of the standard fields on the response, as {@link profileOnResponse} reads it off them,
   * or as the last {@link stackHeaders} returned it; `undefined` when no limiter wrote any.
   */
  readonly profile: HeaderProfile | undefined;
  /** Reads a field already set. */
  get(name: string): unknown;
}

/** What to do to a response: remove `remove`, then set `set`, then record `profile` for the next limiter. */
export interface StackedHeaders {
  readonly set: Record<string, string>;
  readonly remove: readonly string[];
  readonly profile: HeaderProfile | undefined;
}

/**
 * The headers to set when an earlier limiter may already have set some on this response (Express and Koa
 * run a route's limiter after the app-wide one). The response keeps the fields of one profile:
 * - both draft-10/11: the `RateLimit` and `RateLimit-Policy` lists keep both limiters' members;
 * - otherwise the later limiter's standard fields replace the earlier one's, and fields of the earlier
 *   profile that the later one does not write are removed, so no field describes another policy than its
 *   neighbours; a later limiter with `headers: false` leaves the earlier fields alone.
 * `Retry-After` keeps the longer wait; legacy `X-RateLimit-*` fields are the later limiter's.
 *
 * @example
 * const stacked = stackHeaders(outcome, { profile: written.get(res), get: (name) => res.get(name) });
 * for (const name of stacked.remove) res.removeHeader(name);
 * res.set(stacked.set);
 * written.set(res, stacked.profile);
 */
export function stackHeaders(later: ProfiledHeaders, earlier: EarlierHeaders): StackedHeaders {
  // The usual case, one limiter on a response that goes on: nothing earlier to merge, nothing to copy.
  if (earlier.profile === undefined && later.headers['Retry-After'] === undefined) {
    return { set: later.headers, remove: NOTHING_TO_REMOVE, profile: later.profile || undefined };
  }
  const set = { ...later.headers };
  const laterFamily = familyOf(later.profile || undefined);
  const earlierFamily = familyOf(earlier.profile);
  let remove: readonly string[] = [];
  if (laterFamily === 'list' && earlierFamily === 'list') {
    for (const name of STANDARD_FIELDS.list) {
      const before = earlier.get(name);
      if (typeof before === 'string' && before !== '') set[name] = `${before}, ${set[name]}`;
    }
  } else if (laterFamily !== undefined && earlierFamily !== undefined && laterFamily !== earlierFamily) {
    remove = STANDARD_FIELDS[earlierFamily].filter((name) => !(name in set));
  }
  const retryBefore = Number(earlier.get('Retry-After'));
  const retryNow = set['Retry-After'];
  if (retryNow !== undefined && retryBefore > Number(retryNow)) set['Retry-After'] = String(retryBefore);
  return { set, remove, profile: later.profile || earlier.profile };
}

const NOTHING_TO_REMOVE: readonly string[] = Object.freeze([]);

/**
 * The profile of the standard fields a response already carries, read off the fields themselves: every
 * profile writes `RateLimit-Policy`, only draft-6 `RateLimit-Limit`, and draft-7's `RateLimit` alone
 * starts with `limit=`. `undefined` when it carries none, as when no limiter has run on it yet. Read
 * rather than marked on the response: a property of our own on a framework's response object gives it
 * a new shape, which costs every request more than the one lookup of the usual case.
 */
export function profileOnResponse<Res>(
  response: Res,
  get: (response: Res, name: string) => unknown,
): HeaderProfile | undefined {
  if (!isSet(get(response, 'RateLimit-Policy'))) return undefined;
  if (isSet(get(response, 'RateLimit-Limit'))) return 'draft-6';
  const field = get(response, 'RateLimit');
  return typeof field === 'string' && field.startsWith('limit=') ? 'draft-7' : 'draft-11';
}

/** Whether a header read from a response is there (Koa reads a missing one as `''`). */
function isSet(value: unknown): boolean {
  return value !== undefined && value !== '';
}
