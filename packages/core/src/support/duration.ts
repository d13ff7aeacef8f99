/** Durations as people write them (`'15s'`, `'10 seconds'`, `'1.5h'`) turned into whole milliseconds. */

import { TollgateOptionError } from './option-error.js';
import { closestName } from './value-checks.js';

/**
 * The spellings of each unit, by the unit's short name: those of the `ms` package that most Node.js code
 * already uses, singular and plural, minus years (a year has no fixed length).
 */
const SPELLINGS = {
  ms: ['ms', 'msec', 'msecs', 'millisecond', 'milliseconds'],
  s: ['s', 'sec', 'secs', 'second', 'seconds'],
  m: ['m', 'min', 'mins', 'minute', 'minutes'],
  h: ['h', 'hr', 'hrs', 'hour', 'hours'],
  d: ['d', 'day', 'days'],
  w: ['w', 'week', 'weeks'],
} as const;

/**
 * The units a {@link Duration} string may end with, lower case: `ms`, `s`, `m`, `h`, `d`, `w`, and the
 * words `millisecond(s)`/`msec(s)`, `second(s)`/`sec(s)`, `minute(s)`/`min(s)`, `hour(s)`/`hr(s)`,
 * `day(s)`, `week(s)`. Months and years are not units: their length varies.
 */
export type DurationUnit = (typeof SPELLINGS)[keyof typeof SPELLINGS][number];

/**
 * A duration: milliseconds as a number, or a string of a number and a {@link DurationUnit}, with or
 * without a space: `'500ms'`, `'15s'`, `'10 seconds'`, `'2 minutes'`, `'1.5h'`, `'1 day'`, `'1w'`.
 * Decimals are exact (`'1.1s'` is 1100 ms) but must come to whole milliseconds (`'0.5ms'` is refused).
 * Any string type-checks, so options kept in a `const` still fit; a bad one throws when the limiter is
 * created, with the spelling probably meant.
 *
 * @example
 * const window: Duration = '10 seconds';
 */
export type Duration = number | `${number}${DurationUnit}` | `${number} ${DurationUnit}` | (string & {});

const MS_PER_UNIT: Readonly<Record<keyof typeof SPELLINGS, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** The milliseconds in one unit, by every spelling of it. */
const MS_BY_SPELLING: ReadonlyMap<string, number> = new Map(
  Object.entries(SPELLINGS).flatMap(([unit, spellings]) =>
    spellings.map((spelling) => [spelling, MS_PER_UNIT[unit as keyof typeof SPELLINGS]] as const),
  ),
);

const MONTHS = "months differ in length; write days, such as '30d'";
const YEARS = "years differ in length; write days, such as '365d'";
const SUB_MS = 'Tollgate counts whole milliseconds';

/** What people write that is no unit here, and why. `M` is a month to some and a minute to others. */
const NOT_UNITS: ReadonlyMap<string, string> = new Map([
  ...['mo', 'mos', 'mth', 'month', 'months'].map((unit) => [unit, MONTHS] as const),
  ...['y', 'yr', 'yrs', 'year', 'years'].map((unit) => [unit, YEARS] as const),
  ...['us', 'µs', 'μs', 'ns'].map((unit) => [unit, SUB_MS] as const),
  ['M', `'M' is ambiguous: write 'm' for minutes (${MONTHS})`],
]);

/** A number, optional decimals, optional spaces, then whatever the unit is (checked apart, for hints). */
const DURATION_PATTERN = /^(\d+)(?:\.(\d+))?(\s*)([^\d\s.]*)$/;

const EXAMPLES = "'500ms', '15s', '10 seconds', '2 minutes', '1.5h', '1d', '1w'";

/**
 * Turns a {@link Duration} into whole milliseconds.
 *
 * Throws a `TypeError` naming `what` when the value is not a positive, whole number of milliseconds
 * (fractions of a millisecond would make refill maths inexact, so `'1.5s'` is fine and `'0.5ms'` is
 * not), or when a string's unit is unknown, with the spelling probably meant (`'10 secnds'`: did you mean
 * `'10 seconds'`?).
 *
 * @example
 * parseDuration('15s'); // 15000
 * parseDuration('2 minutes'); // 120000
 * parseDuration('1.5h'); // 5400000
 * parseDuration(250); // 250
 */
export function parseDuration(value: Duration, what = 'duration'): number {
  const ms = typeof value === 'string' ? fromString(value, what) : value;
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms <= 0) {
    throw new TollgateOptionError(
      `${what} must be a positive whole number of milliseconds or a duration such as ${EXAMPLES}; got ${describe(value)}`,
    );
  }
  return ms;
}

/**
 * Writes milliseconds in the largest unit up to days that divides them exactly, for names and messages.
 * (Not weeks: default policy names, and so storage keys, were written in days before weeks existed.)
 *
 * @example
 * formatDuration(60000); // '1m'
 * formatDuration(1500);  // '1500ms'
 */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    if (ms % MS_PER_UNIT[unit] === 0) return `${ms / MS_PER_UNIT[unit]}${unit}`;
  }
  return `${ms}ms`;
}

/** The milliseconds a duration string stands for; throws with what is wrong and, if it can, a fix. */
function fromString(value: string, what: string): number {
  const text = value.trim();
  const match = DURATION_PATTERN.exec(text);
  if (!match) {
    throw new TollgateOptionError(
      `${what} must be milliseconds or a duration such as ${EXAMPLES}; got '${value}'`,
    );
  }
  const [, whole = '', fraction = '', space = '', unit = ''] = match;
  const number = fraction ? `${whole}.${fraction}` : whole;
  if (unit === '') {
    throw new TollgateOptionError(
      `${what}: '${value}' has no unit; write ${number} for milliseconds, or '${number}s'`,
    );
  }
  const unitMs = MS_BY_SPELLING.get(unit);
  if (unitMs === undefined) throw new TollgateOptionError(`${what}: ${unknownUnit(unit, number, space)}`);
  const ms = exactMs(whole, fraction, unitMs);
  if (ms === undefined) {
    throw new TollgateOptionError(`${what} must be a whole number of milliseconds; '${value}' is not`);
  }
  if (ms <= 0) throw new TollgateOptionError(`${what} must be positive; got '${value}'`);
  return ms;
}

/**
 * `whole.fraction` units in milliseconds, computed exactly: decimal digits are scaled as integers, so
 * `'1.1s'` is exactly 1100 ms (1.1 × 1000 is not, in binary). `undefined` for a fraction of a millisecond.
 */
function exactMs(whole: string, fraction: string, unitMs: number): number | undefined {
  const scaled = BigInt(whole + fraction) * BigInt(unitMs);
  const divisor = 10n ** BigInt(fraction.length);
  return scaled % divisor === 0n ? Number(scaled / divisor) : undefined;
}

/** Why `unit` is no unit, and the spelling probably meant. Short units are only matched up to case. */
function unknownUnit(unit: string, number: string, space: string): string {
  const why = NOT_UNITS.get(unit) ?? NOT_UNITS.get(unit.toLowerCase());
  if (why !== undefined) return `'${number}${space}${unit}' is not a duration here: ${why}`;
  const spellings = [...MS_BY_SPELLING.keys()];
  const meant =
    unit.length <= 2
      ? spellings.find((spelling) => spelling === unit.toLowerCase())
      : closestName(unit, spellings);
  const head = `unknown unit '${unit}' in '${number}${space}${unit}'`;
  if (meant !== undefined) return `${head}; did you mean '${number}${space}${meant}'?`;
  return `${head}; write ms, s, m, h, d or w, or a word such as '10 seconds', '2 minutes', '1 hour', '1 week'`;
}

function describe(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : String(value);
}
