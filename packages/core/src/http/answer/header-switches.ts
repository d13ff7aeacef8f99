/**
 * The per-header switches (`addHeaders`, `addHeadersOnExceeding`, as @fastify/rate-limit names them):
 * which of the headers a profile writes are sent on limited answers and on allowed ones.
 */
import { TollgateOptionError } from '../../support/option-error.js';
import { isSettingsObject, rejectUnknownNames } from '../../support/value-checks.js';

/** The headers an allowed answer may carry, by their lower-case names. */
export const ALLOWED_ANSWER_HEADERS = [
  'ratelimit',
  'ratelimit-policy',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
] as const;

/** The headers a limited answer may carry: those of an allowed one, and `Retry-After`. */
export const LIMITED_ANSWER_HEADERS = [...ALLOWED_ANSWER_HEADERS, 'retry-after'] as const;

/** A header of an allowed answer, by its lower-case name. */
export type AllowedAnswerHeader = (typeof ALLOWED_ANSWER_HEADERS)[number];
/** A header of a limited answer, by its lower-case name. */
export type LimitedAnswerHeader = (typeof LIMITED_ANSWER_HEADERS)[number];

/**
 * Switches for headers: `false` leaves one out; a header not named (or `true`) is sent as its profile
 * (`headers`, `legacyHeaders`) says.
 *
 * @example
 * const noRetryAfter: HeaderSwitches<LimitedAnswerHeader> = { 'retry-after': false };
 */
export type HeaderSwitches<Name extends string> = { readonly [Header in Name]?: boolean };

/** The names the header writers use, by lower-case name. */
const WRITTEN_NAMES: Readonly<Record<LimitedAnswerHeader, string>> = {
  ratelimit: 'RateLimit',
  'ratelimit-policy': 'RateLimit-Policy',
  'ratelimit-limit': 'RateLimit-Limit',
  'ratelimit-remaining': 'RateLimit-Remaining',
  'ratelimit-reset': 'RateLimit-Reset',
  'x-ratelimit-limit': 'X-RateLimit-Limit',
  'x-ratelimit-remaining': 'X-RateLimit-Remaining',
  'x-ratelimit-reset': 'X-RateLimit-Reset',
  'retry-after': 'Retry-After',
};

/**
 * Checks a switches option against the headers it may name; returns the names (as written) switched
 * off, or `undefined` when none is. Throws a `TypeError` naming `what`.
 *
 * @example
 * headersSwitchedOff({ 'retry-after': false }, LIMITED_ANSWER_HEADERS, 'addHeaders'); // ['Retry-After']
 */
export function headersSwitchedOff(
  value: unknown,
  known: readonly LimitedAnswerHeader[],
  what: string,
): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (!isSettingsObject(value)) {
    throw new TollgateOptionError(
      `${what} must be an object of header switches like { 'retry-after': false }`,
    );
  }
  rejectUnknownNames(value, known, new Map(), `${what} has an unknown header`);
  const off: string[] = [];
  for (const [name, on] of Object.entries(value)) {
    if (on !== undefined && typeof on !== 'boolean') {
      throw new TollgateOptionError(`${what}['${name}'] must be true or false; got ${String(on)}`);
    }
    if (on === false) off.push(WRITTEN_NAMES[name as LimitedAnswerHeader]);
  }
  return off.length > 0 ? off : undefined;
}
