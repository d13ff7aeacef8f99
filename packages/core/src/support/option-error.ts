/** The error of an option Tollgate does not take: thrown where the limiter, store or adapter is made. */
import { codeInStack, joinFamily } from './tollgate-error.js';

/**
 * An option Tollgate does not take, or a combination of options it refuses; also a value that an
 * option's function returned and that the option does not allow. Thrown when the limiter, store or
 * middleware is made (or, for a function's result, on the request that got it), so a bad setup fails at
 * startup. The message starts with what was being made (`createLimiter: `, `@tollgate/express: `,
 * `RedisStore `) and names the option.
 *
 * A `TypeError`, as before the error family, so `instanceof TypeError` still holds; and a
 * {@link TollgateError} with `code` `'TOLLGATE_INVALID_OPTION'` (see `TollgateError` for how both hold).
 *
 * @example
 * try {
 *   createLimiter({ policies: { limit: -1, window: '1m' } });
 * } catch (error) {
 *   if (error instanceof TollgateError) console.error(error.code, error.message); // TOLLGATE_INVALID_OPTION createLimiter: policy.limit must be …
 * }
 */
export class TollgateOptionError extends TypeError {
  /** Always `'TOLLGATE_INVALID_OPTION'`. */
  declare readonly code: 'TOLLGATE_INVALID_OPTION';
  /** The entry of docs/errors.md for this code. */
  declare readonly help: string;

  constructor(message: string) {
    super(message);
    codeInStack(this, 'TOLLGATE_INVALID_OPTION');
  }
}
joinFamily(TollgateOptionError, 'TOLLGATE_INVALID_OPTION');

/**
 * An option whose numbers Tollgate cannot count exactly (a `burst × window` too large): a `RangeError`,
 * as before the error family, and a {@link TollgateError} with `code` `'TOLLGATE_INVALID_OPTION'`.
 *
 * @example
 * throw new TollgateRangeError('policy: burst × window is too large to count exactly');
 */
export class TollgateRangeError extends RangeError {
  /** Always `'TOLLGATE_INVALID_OPTION'`. */
  declare readonly code: 'TOLLGATE_INVALID_OPTION';
  /** The entry of docs/errors.md for this code. */
  declare readonly help: string;

  constructor(message: string) {
    super(message);
    codeInStack(this, 'TOLLGATE_INVALID_OPTION');
  }
}
joinFamily(TollgateRangeError, 'TOLLGATE_INVALID_OPTION');

/**
 * `error`, said to come from `source`: an option error whose message does not start with `source` is
 * thrown again as one that does (`createLimiter: policy.limit must be …`), since the checks it came from
 * are shared by every public function that takes options. Any other error is returned as it is.
 *
 * @example
 * try { return limiterOf(options); } catch (error) { throw fromSource(error, 'createLimiter'); }
 */
export function fromSource(error: unknown, source: string): unknown {
  if (!(error instanceof TollgateOptionError || error instanceof TollgateRangeError)) return error;
  if (error.message.startsWith(source)) return error;
  const message = `${source}: ${error.message}`;
  return error instanceof TollgateRangeError
    ? new TollgateRangeError(message)
    : new TollgateOptionError(message);
}
