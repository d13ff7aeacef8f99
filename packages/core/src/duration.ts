/** Durations as people write them (`'15s'`, `'1m'`) turned into whole milliseconds. */

/**
 * A duration: milliseconds as a number, or a string such as `'500ms'`, `'15s'`, `'1m'`, `'1h'`, `'1d'`
 * (a number and a {@link DurationUnit}). Typed as any string so options kept in a `const` still fit;
 * a bad one throws when the limiter is created.
 */
export type Duration = number | string;

/** The units a {@link Duration} string may end with. */
export type DurationUnit = 'ms' | 's' | 'm' | 'h' | 'd';

const MS_PER_UNIT: Record<DurationUnit, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const DURATION_PATTERN = /^(\d+)(?:\.(\d+))? ?(ms|s|m|h|d)$/;

/**
 * Turns a {@link Duration} into whole milliseconds.
 *
 * Throws a `TypeError` naming `what` when the value is not a positive, whole number of milliseconds:
 * fractions of a millisecond would make refill maths inexact, so `'1.5s'` is fine and `'0.5ms'` is not.
 *
 * @example
 * parseDuration('15s'); // 15000
 * parseDuration(250);   // 250
 */
export function parseDuration(value: Duration, what = 'duration'): number {
  const ms = typeof value === 'number' ? value : fromString(value, what);
  if (!Number.isSafeInteger(ms) || ms <= 0) {
    throw new TypeError(
      `${what} must be a positive whole number of milliseconds or a string like '15s', '1m', '1h'; got ${describe(value)}`,
    );
  }
  return ms;
}

/**
 * Writes milliseconds in the largest unit that divides them exactly, for names and messages.
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

function fromString(value: unknown, what: string): number {
  const match = typeof value === 'string' ? DURATION_PATTERN.exec(value.trim()) : null;
  if (!match) {
    throw new TypeError(
      `${what} must be milliseconds or a string like '500ms', '15s', '1m', '1h', '1d'; got ${describe(value)}`,
    );
  }
  const [, whole, fraction = '', unit] = match as unknown as [
    string,
    string,
    string | undefined,
    DurationUnit,
  ];
  // Decimal digits are scaled separately so '1.1s' is exactly 1100 ms (1.1 * 1000 is not, in binary).
  const unitMs = MS_PER_UNIT[unit];
  return Number(whole) * unitMs + (Number(fraction || '0') * unitMs) / 10 ** fraction.length;
}

function describe(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : String(value);
}
