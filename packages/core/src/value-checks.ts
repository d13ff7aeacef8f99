/** Checks of single values shared by options and policies: each throws a `TypeError` naming the value. */

/**
 * `value` if it is a positive whole number (a safe integer), else a `TypeError` naming `what`.
 *
 * @example
 * positiveWholeNumber(10, '@tollgate/express: limit'); // 10
 */
export function positiveWholeNumber(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new TypeError(`${what} must be a positive whole number; got ${describeValue(value)}`);
  }
  return value;
}

/**
 * Whether `value` is an object that holds named settings: not `null`, an array or a function.
 *
 * @example
 * isSettingsObject({ limit: 10 }); // true
 * isSettingsObject([{ limit: 10 }]); // false
 */
export function isSettingsObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A value as error messages show it: strings quoted, functions and arrays by kind.
 *
 * @example
 * describeValue('strict'); // "'strict'"
 * describeValue(() => {}); // 'a function'
 */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return 'an object';
  return String(value);
}
