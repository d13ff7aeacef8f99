/**
 * Checks of single values shared by options and policies: each throws a `TypeError` naming the value.
 * Also where option objects are taken in: {@link ownOptions}.
 */
import { TollgateOptionError } from './option-error.js';

/**
 * `value` if it is a positive whole number (a safe integer), else a `TypeError` naming `what`.
 *
 * @example
 * positiveWholeNumber(10, '@tollgate/express: limit'); // 10
 */
export function positiveWholeNumber(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new TollgateOptionError(`${what} must be a positive whole number; got ${describeValue(value)}`);
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
 * A settings object as its owner wrote it: a shallow copy with no prototype, holding only the object's
 * own enumerable string-keyed properties. Anything else (`undefined`, `false`, a function, an array, a
 * string) is returned as it is.
 *
 * Options are read through this once, where they enter the core: a read of a name the caller did not set
 * then finds nothing, rather than whatever another library's bug put on `Object.prototype`
 * (`Object.prototype.skip = () => true` would otherwise switch limiting off in every app of the process).
 * Values are not copied: a store, a logger or a key function keeps its own prototype and methods.
 *
 * @example
 * const options = ownOptions(Object.assign(Object.create({ skip: () => true }), { limit: 5 }));
 * options.limit; // 5
 * options.skip; // undefined
 */
export function ownOptions<T>(value: T): T {
  if (!isSettingsObject(value)) return value;
  const own: Record<string, unknown> = Object.create(null);
  // `Object.keys` lists own enumerable string keys only; an own `__proto__` key (from JSON.parse, say)
  // is a plain property of a null-prototype object, so it is copied as data and rejected as unknown.
  for (const name of Object.keys(value)) own[name] = value[name];
  return own as T;
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

/**
 * A field of a call's options if the caller set it: options are made per call, so they are not copied,
 * and `Object.hasOwn` keeps `Object.prototype.dryRun` or `.onStoreError` from deciding for every call.
 *
 * @example
 * ownField({ cost: 2 }, 'cost'); // 2
 */
export function ownField<O extends object, F extends keyof O>(
  options: O | undefined,
  field: F,
): O[F] | undefined {
  return typeof options === 'object' && options !== null && Object.hasOwn(options, field)
    ? options[field]
    : undefined;
}

/**
 * A true-or-false option (`exponentialBackoff`, `continueExceeding`, `overrides`), checked: `true`,
 * `false`, or not given (`false`).
 *
 * @example
 * flagOption(true, 'exponentialBackoff'); // true
 */
export function flagOption(value: unknown, what: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') {
    throw new TollgateOptionError(`${what} must be true or false; got ${describeValue(value)}`);
  }
  return value;
}
