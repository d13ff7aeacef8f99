/** A store that fails for a stretch of time: the shared store of the outage picture, down and back up. */
import { type BucketRequest, type BucketResult, type Store, StoreUnavailableError } from '@tollgate/core';

/**
 * Wraps a store shared by several limiters, as Redis is shared by app servers. While `isDown()` says so,
 * every `update` rejects at once with a `StoreUnavailableError`, as `RedisStore` does while Redis is away
 * (its breaker open: no round trip, no wait); otherwise calls pass to `inner`. It is not `local`, so
 * limiters treat it as a remote store, deny cache included; its `clock` is the inner store's.
 *
 * @example
 * const store = new FlakyStore(new MemoryStore({ clock: clock.now }), () => clock.atMs() >= 20_000);
 */
export class FlakyStore implements Store {
  readonly clock: (() => number) | undefined;
  readonly #inner: Store;
  readonly #isDown: () => boolean;

  constructor(inner: Store, isDown: () => boolean) {
    this.#inner = inner;
    this.clock = inner.clock;
    this.#isDown = isDown;
  }

  update(request: BucketRequest): Promise<BucketResult> {
    if (this.#isDown()) return Promise.reject(new StoreUnavailableError('the shared store is down'));
    return this.#inner.update(request);
  }

  reset(...args: Parameters<Store['reset']>): Promise<void> {
    return this.#inner.reset(...args);
  }
}
