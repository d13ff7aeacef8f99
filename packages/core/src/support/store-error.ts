/** The error a store throws when it cannot answer now: down, unreachable, silent, or its breaker open. */
import { TollgateError } from './tollgate-error.js';

/**
 * The store cannot answer now. Limiters catch it and take their fallback (by default the per-process
 * insurance limiter). When `reported` is set, the store has logged the incident once already. It carries
 * no stack trace of its own (its `stack` is its name and message); `cause`, when set, is the client's
 * error, with its own. A {@link TollgateError}.
 *
 * @example
 * try {
 *   await store.update(request);
 * } catch (error) {
 *   if (error instanceof StoreUnavailableError) useFallback();
 *   else throw error;
 * }
 */
export class StoreUnavailableError extends TollgateError {
  override readonly name = 'StoreUnavailableError';
  /** A stable code for logs and error handlers. */
  declare readonly code: 'TOLLGATE_STORE_UNAVAILABLE';

  /** `true` when the store has logged this incident itself (`RedisStore` does, once per incident). */
  readonly reported: boolean;

  constructor(message: string, options: { cause?: unknown; reported?: boolean } = {}) {
    const errorOptions = 'cause' in options ? { cause: options.cause } : undefined;
    // No stack trace: while Redis is away every check may get one of these, and its frames (the store's,
    // a timer's) say nothing its message and `cause` do not. Capturing them costs as much as the rest of
    // a check on the fallback. Error's constructor cannot throw in between.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super('TOLLGATE_STORE_UNAVAILABLE', message, errorOptions);
    Error.stackTraceLimit = stackTraceLimit;
    this.reported = options.reported ?? false;
  }
}
