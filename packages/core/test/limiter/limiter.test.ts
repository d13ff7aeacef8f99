import { describe, expect, it } from 'vitest';
import { createLimiter } from '../../src/limiter/limiter.js';
import type { Store } from '../../src/model/store.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';

describe('createLimiter options', () => {
  it.each([
    [undefined, /createLimiter needs options/],
    [{}, /policies|policy/],
    [{ policies: { limit: 1, window: '1s' }, store: {} }, /store must be a Store/],
    [{ policies: { limit: 1, window: '1s' }, namespace: 'has space' }, /namespace must be/],
  ])('rejects %j at construction', (options, message) => {
    expect(() => createLimiter(options as never)).toThrow(message);
  });

  it('defaults to a per-process memory store', async () => {
    const limiter = createLimiter({ policies: { limit: 1, window: '1h' } });
    expect((await limiter.consume('a')).allowed).toBe(true);
    expect((await limiter.consume('a')).allowed).toBe(false);
  });
});

describe('limiter calls', () => {
  const limiter = createLimiter({ policies: { limit: 5, window: '1s' } });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY, '2'])('rejects cost %s', async (cost) => {
    await expect(limiter.consume('a', { cost: cost as never })).rejects.toThrow(
      /cost must be a positive finite/,
    );
  });

  it.each(['', 42, undefined])('rejects key %j', async (key) => {
    await expect(limiter.consume(key as never)).rejects.toThrow(/non-empty string/);
  });

  it('keeps namespaces apart on one store', async () => {
    const store = new MemoryStore();
    const policies = { limit: 1, window: '1h' } as const;
    const login = createLimiter({ store, policies, namespace: 'login' });
    const search = createLimiter({ store, policies, namespace: 'search' });
    expect((await login.consume('ip')).allowed).toBe(true);
    expect((await search.consume('ip')).allowed).toBe(true);
    expect((await login.consume('ip')).allowed).toBe(false);
  });
});

describe('refunds and resets of degraded decisions', () => {
  /** A store that fails while `down` is set, like a Redis that went away. */
  function flakyStore() {
    const inner = new MemoryStore({ clock: () => 1_700_000_000_000 });
    const state = { down: false };
    const store: Store = {
      local: true,
      clock: () => 1_700_000_000_000,
      update: (request) => (state.down ? Promise.reject(new Error('down')) : inner.update(request)),
      reset: (key, policies) => (state.down ? Promise.reject(new Error('down')) : inner.reset(key, policies)),
    };
    return { store, state };
  }

  it('gives a degraded charge back to the insurance limiter, never to the store', async () => {
    const { store, state } = flakyStore();
    const limiter = createLimiter({ store, policies: { limit: 2, window: '1h' } });
    expect((await limiter.consume('a')).degraded).toBe(false); // the store: 1 left
    state.down = true;
    const degraded = await limiter.consume('a'); // the insurance: 1 left
    expect(degraded).toMatchObject({ degraded: true, allowed: true });
    await limiter.refund('a', 1, { degraded: true }); // the insurance is full again
    expect(await limiter.peek('a', { cost: 2 })).toMatchObject({ degraded: true, allowed: true });
    state.down = false;
    // The store still holds its own charge: the insurance refund gave nothing back here.
    expect(await limiter.peek('a', { cost: 2 })).toMatchObject({ degraded: false, allowed: false });
  });

  it('a refund to a failing store rejects, and touches the insurance limiter not at all', async () => {
    const { store, state } = flakyStore();
    const limiter = createLimiter({ store, policies: { limit: 2, window: '1h' } });
    state.down = true;
    await limiter.consume('a');
    await expect(limiter.refund('a', 1)).rejects.toThrow('down');
    expect((await limiter.peek('a', { cost: 2 })).allowed).toBe(false); // the insurance keeps its charge
  });

  it('reset refills the insurance limiter too', async () => {
    const { store, state } = flakyStore();
    const limiter = createLimiter({ store, policies: { limit: 1, window: '1h' } });
    state.down = true;
    await limiter.consume('a');
    expect((await limiter.consume('a')).allowed).toBe(false);
    state.down = false;
    await limiter.reset('a');
    state.down = true;
    expect(await limiter.consume('a')).toMatchObject({ degraded: true, allowed: true });
  });
});

describe('penalty and reward', () => {
  it('a penalty charges even what is not there, so the client owes and waits longer; a reward gives back', async () => {
    const { MemoryStore: Store } = await import('../../src/stores/memory/memory-store.js');
    let nowMs = 1_000_000;
    const limiter = createLimiter({
      store: new Store({ clock: () => nowMs }),
      policies: { limit: 2, window: '2s' },
    });
    await limiter.consume('k', { cost: 2 });
    const owed = await limiter.penalty('k', 2);
    expect(owed).toMatchObject({ allowed: false, retryAfterMs: 3_000 }); // 2 owed + 1 to spend: 3 tokens at 1/s
    expect(owed.decidedBy).toMatchObject({ remaining: 0, nextTokenMs: 3_000 }); // never a negative remaining
    nowMs += 2_999;
    expect((await limiter.consume('k')).allowed).toBe(false);
    await limiter.reward('k', 1);
    expect((await limiter.consume('k')).allowed).toBe(true);
  });

  it.each(['fixed-window', 'sliding-window'] as const)('work on a %s too', async (algorithm) => {
    const limiter = createLimiter({ policies: { limit: 3, window: '1h', algorithm } });
    await limiter.penalty('k', 5);
    expect((await limiter.consume('k')).allowed).toBe(false);
    await limiter.reward('k', 3);
    expect((await limiter.consume('k')).allowed).toBe(true);
  });
});

describe('a decision of several policies', () => {
  // Each policy's part is read at its own place among the key's states: answered by the memory store in
  // place, and from the states a store hands back (a store wrapping the memory store's update).
  class HandedBack extends MemoryStore {
    override async update(request: Parameters<MemoryStore['update']>[0]) {
      return super.update(request);
    }
  }

  it.each([
    ['the memory store', MemoryStore],
    ['a store handing states back', HandedBack],
  ] as const)('describes each policy as it would alone, on %s', async (_name, Store) => {
    const algorithms = ['token-bucket', 'fixed-window', 'sliding-window'] as const;
    const policyOf = (algorithm: (typeof algorithms)[number]) => ({
      name: algorithm,
      limit: 4,
      window: '10s',
      algorithm,
    });
    let nowMs = 1_700_000_000_000;
    const clock = () => nowMs;
    // A roomy first policy shifts the others' states; each is compared with a limiter of it alone.
    const together = createLimiter({
      store: new Store({ clock }),
      policies: [{ name: 'roomy', limit: 1_000, window: '10s' }, ...algorithms.map(policyOf)],
    });
    const alone = algorithms.map((algorithm) =>
      createLimiter({ store: new Store({ clock }), policies: policyOf(algorithm) }),
    );
    // Spent in one window, then checks into the next, where the sliding window still weighs the first.
    for (const stepMs of [0, 1_000, 1_000, 9_000, 500, 500, 2_000]) {
      nowMs += stepMs;
      if ((await together.consume('k')).allowed)
        await Promise.all(alone.map((limiter) => limiter.consume('k')));
      const { policies } = await together.peek('k');
      const alones = await Promise.all(alone.map((limiter) => limiter.peek('k')));
      for (const [i, single] of alones.entries()) expect(policies[i + 1]).toEqual(single.decidedBy);
    }
  });
});
