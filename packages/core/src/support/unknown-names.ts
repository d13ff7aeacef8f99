/** What to say about a name nobody declared (an option, a policy field, a warning code): a hint, not a shrug. */
import { TollgateOptionError } from './option-error.js';

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
