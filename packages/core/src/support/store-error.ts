/** The error a store throws when it cannot answer now: down, unreachable, silent, or its breaker open. */

/**
 * The store cannot answer now. Limiters catch it and take their fallback (by default the per-process
 * insurance limiter). When `reported` is set, the store has logged the incident once already.
 *
 * @example
 * try {
 *   await store.update(request);
 * } catch (error) {
 *   if (error instanceof StoreUnavailableError) useFallback();
 *   else throw error;
 * }
 */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  /** A stable code for logs and error handlers. */
  readonly code = 'TOLLGATE_STORE_UNAVAILABLE';

  /** `true` when the store has logged this incident itself (`RedisStore` does, once per incident). */
  readonly reported: boolean;

  constructor(message: string, options: { cause?: unknown; reported?: boolean } = {}) {
    super(message, 'cause' in options ? { cause: options.cause } : undefined);
    this.reported = options.reported ?? false;
  }
}
