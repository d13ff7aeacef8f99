/** The error of a call Tollgate cannot take: a bad key, cost or call option, thrown by the call. */
import { codeInStack, joinFamily } from './tollgate-error.js';

/**
 * A method of a limiter or a store was called with a value it does not take: an empty key, a cost that
 * is not a positive number, call options that are not an object, a `settle` cost below 0. A bug in the
 * calling code, never a store failure: limiters throw it (or reject with it) rather than take their
 * fallback. (A `setOverride`'s limits and `ttl` are checked as a policy's options are, and throw
 * `TollgateOptionError`.)
 *
 * A `TypeError`, as before the error family, so `instanceof TypeError` still holds; and a
 * {@link TollgateError} with `code` `'TOLLGATE_INVALID_ARGUMENT'`.
 *
 * @example
 * await limiter.consume('user:1', { cost: 0 }); // rejects: TOLLGATE_INVALID_ARGUMENT, cost must be a positive finite number
 */
export class TollgateArgumentError extends TypeError {
  /** Always `'TOLLGATE_INVALID_ARGUMENT'`. */
  declare readonly code: 'TOLLGATE_INVALID_ARGUMENT';
  /** The entry of docs/errors.md for this code. */
  declare readonly help: string;

  constructor(message: string) {
    super(message);
    codeInStack(this, 'TOLLGATE_INVALID_ARGUMENT');
  }
}
joinFamily(TollgateArgumentError, 'TOLLGATE_INVALID_ARGUMENT');
