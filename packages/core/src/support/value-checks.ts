/**
 * Checks of the values and names that options and policies are given: each throws an error naming what
 * it checked. Also where option objects are taken in ({@link ownOptions}), and what to say about a name
 * nobody declared (an option, a policy field, a warning code): a hint, not a shrug.
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

/**
 * What another rate limiter's name means here: the name to write instead, or why there is none.
 *
 * @example
 * const hint: NameHint = { use: 'limit' };
 * const none: NameHint = { from: 'rate-limiter-flexible', unsupported: 'Tollgate never delays requests' };
 */
export type NameHint = { readonly use: string } | { readonly from?: string; readonly unsupported: string };

/**
 * The end of an "unknown name" message: what to write instead (a peer's spelling), the closest known name
 * (a typo), or the list of known names. Peers come first: `max` is close to no name of ours by spelling,
 * yet means `limit`.
 *
 * @example
 * `unknown option 'limt'${unknownNameHint('limt', ['limit', 'window'], new Map())}`;
 * // "unknown option 'limt'; did you mean limit?"
 */
export function unknownNameHint(
  name: string,
  known: readonly string[],
  peers: ReadonlyMap<string, NameHint>,
): string {
  const peer = peers.get(name);
  if (peer !== undefined && 'use' in peer) return `; use ${peer.use}.`;
  if (peer !== undefined)
    return `${peer.from ? ` (from ${peer.from})` : ''}: not supported; ${peer.unsupported}.`;
  const closest = closestName(name, known);
  return closest === undefined ? `. Known: ${known.join(', ')}` : `; did you mean ${closest}?`;
}

/**
 * The known name `name` is most likely a typo of, if any is close enough: at most one edit per three
 * characters, case ignored, a swap of neighbours counting as one edit (`windwo` is `window`).
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const allowed = Math.max(1, Math.floor(name.length / 3));
  let best: string | undefined;
  let bestDistance = allowed + 1;
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

/** Optimal string alignment distance: Levenshtein plus transpositions of adjacent characters. */
function editDistance(a: string, b: string): number {
  // rows[i][j]: the distance between the first i characters of a and the first j of b.
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => rows[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] as number[];
    for (let j = 1; j <= b.length; j++) {
      const substitution = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + substitution);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        row[j] = Math.min(at(i, j), at(i - 2, j - 2) + 1);
      }
    }
  }
  return at(a.length, b.length);
}

/**
 * Throws a `TypeError` for the first own key of `object` that is not in `known`, with a hint.
 * `what` names the key's kind and where it is: `'@tollgate/express: unknown option'`.
 *
 * @example
 * rejectUnknownNames({ limt: 5 }, ['limit'], new Map(), 'unknown option'); // throws "unknown option 'limt'; did you mean limit?"
 */
export function rejectUnknownNames(
  object: object,
  known: readonly string[],
  peers: ReadonlyMap<string, NameHint>,
  what: string,
): void {
  for (const name of Object.keys(object)) {
    if (!known.includes(name))
      throw new TollgateOptionError(`${what} '${name}'${unknownNameHint(name, known, peers)}`);
  }
}
