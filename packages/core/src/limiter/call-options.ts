/** The options each limiter method takes per call, checked on every call: a misspelt one is refused. */

import { TollgateArgumentError } from '../support/argument-error.js';
import { rejectUnknownNames } from '../support/value-checks.js';

/** The options of `consume`; `peek` and `reserve` take some of them. */
export const CONSUME_OPTIONS: readonly string[] = ['cost', 'onStoreError', 'dryRun', 'maxWait', 'signal'];
/** The options of `peek`. */
export const PEEK_OPTIONS: readonly string[] = ['cost', 'onStoreError'];
/** The options of `reserve`, which is given its cost. */
export const RESERVE_OPTIONS: readonly string[] = ['onStoreError', 'dryRun', 'id', 'ttl'];
/** The options of `schedule`. */
export const SCHEDULE_OPTIONS: readonly string[] = ['cost', 'onStoreError', 'maxWait', 'signal'];
/** The options of `refund`. */
export const REFUND_OPTIONS: readonly string[] = ['degraded', 'chargedAtMs'];

/**
 * Throws a `TypeError` for an own option of `options` that `method` does not take, as a construction
 * option is refused: an option silently ignored (`consume(key, { maxWait })`) is a bug the caller
 * cannot see. A loop over the object's own names, so a check of `{ cost }` costs no allocation.
 *
 * @example
 * checkCallOptions({ cost: 2, maxWait: 3000 }, PEEK_OPTIONS, 'peek'); // throws: unknown option 'maxWait'
 */
export function checkCallOptions(options: unknown, known: readonly string[], method: string): void {
  if (typeof options !== 'object' || options === null) {
    if (options === undefined) return;
    throw new TollgateArgumentError(`${method}'s options must be an object; got ${String(options)}`);
  }
  for (const name in options) {
    if (!known.includes(name) && Object.hasOwn(options, name)) {
      rejectUnknownNames(options, known, new Map(), `${method}: unknown option`);
    }
  }
}
