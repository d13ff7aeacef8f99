import { describe, expect, it } from 'vitest';
import { createConcurrencyLimiter } from '../../src/limiter/concurrency-limiter.js';
import type { Store } from '../../src/model/store.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';

/** A store whose every lease operation fails, as Redis does while it is down. */
function downStore(): Store & { calls: number } {
  const store = {
    calls: 0,
    update: async () => Promise.reject(new Error('down')),
    reset: async () => Promise.reject(new Error('down')),
    lease: async () => {
      store.calls++;
      throw new Error('ECONNREFUSED');
    },
  };
  return store as never;
}

describe('createConcurrencyLimiter options', () => {
  it.each([
    [undefined, /needs options/],
    [{ limit: 0 }, /limit must be a positive whole number/],
    [{ limit: 2, leaseTtl: 'soon' }, /leaseTtl must be/],
    [{ limit: 2, namespace: 'a b' }, /namespace must be/],
    [{ limit: 2, onStoreError: 'allow' }, /onStoreError must be 'insurance', 'throw' or a function/],
    [{ limit: 2, store: { update: async () => ({}), reset: async () => {} } }, /holds leases/],
    [{ limit: 2, insurance: { instances: 0 } }, /insurance.instances/],
  ])('rejects %j at construction', (options, message) => {
    expect(() => createConcurrencyLimiter(options as never)).toThrow(message);
  });
});

describe('when the store fails', () => {
  it("takes the lease in this process's insurance, its share of the limit, and releases it there", async () => {
    const store = downStore();
    const limiter = createConcurrencyLimiter({ store, limit: 4, insurance: { instances: 2 } });
    const first = await limiter.acquire('k');
    expect(first).toMatchObject({ acquired: true, degraded: true, limit: 2, held: 1 });
    expect((await limiter.acquire('k')).acquired).toBe(true);
    expect((await limiter.acquire('k')).acquired).toBe(false);
    await first.lease?.release();
    expect((await limiter.acquire('k')).acquired).toBe(true);
    expect(store.calls).toBe(4); // every acquire asked the store first; the release did not
  });

  it("rejects with the store's error with onStoreError: 'throw'", async () => {
    const limiter = createConcurrencyLimiter({ store: downStore(), limit: 1, onStoreError: 'throw' });
    await expect(limiter.acquire('k')).rejects.toThrow('ECONNREFUSED');
  });

  it('never lets a bad key through as a store failure', async () => {
    const limiter = createConcurrencyLimiter({ store: new MemoryStore(), limit: 1 });
    await expect(limiter.acquire('')).rejects.toThrow(/non-empty string/);
  });
});
