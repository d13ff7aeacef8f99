import { describe, expect, it } from 'vitest';
import { createLimiter } from '../../../src/limiter/limiter.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';

function clockAt(startMs: number) {
  const clock = { nowMs: startMs, now: () => clock.nowMs };
  return clock;
}

describe('MemoryStore bounds', () => {
  it('rejects a bad maxKeys or clock', () => {
    expect(() => new MemoryStore({ maxKeys: 0 })).toThrow(/maxKeys/);
    expect(() => new MemoryStore({ clock: 5 as never })).toThrow(/clock/);
  });

  it('forgets refilled buckets first, so no limit is loosened', async () => {
    const clock = clockAt(1_000_000);
    const store = new MemoryStore({ maxKeys: 3, clock: clock.now });
    const slow = createLimiter({ store, policies: { limit: 1, window: '1h' }, namespace: 'slow' });
    const fast = createLimiter({ store, policies: { limit: 1, window: '1s' }, namespace: 'fast' });
    await slow.consume('a');
    await fast.consume('b');
    await fast.consume('c');
    clock.nowMs += 1000; // b and c are full again; a is not
    await fast.consume('d');
    expect(store.size).toBe(3); // one refilled bucket made room
    await fast.consume('e');
    expect(store.size).toBe(3); // and then the other
    expect((await slow.consume('a')).allowed).toBe(false);
  });

  it('when nothing has refilled, forgets the buckets closest to full and stays bounded', async () => {
    const clock = clockAt(1_000_000);
    const store = new MemoryStore({ maxKeys: 10, clock: clock.now });
    const limiter = createLimiter({ store, policies: { limit: 10, window: '1h' } });
    await limiter.consume('heavy', { cost: 9 });
    for (let i = 0; i < 50; i++) await limiter.consume(`light-${i}`);
    expect(store.size).toBeLessThanOrEqual(10);
    expect((await limiter.peek('heavy')).decidedBy.remaining).toBe(1); // kept: furthest from full
  });
});

describe('MemoryStore under a flood', () => {
  it('stays bounded through 200,000 distinct keys, and the abuser it is limiting keeps its bucket', async () => {
    const clock = clockAt(1_000_000);
    const store = new MemoryStore({ maxKeys: 10_000, clock: clock.now });
    const login = createLimiter({ store, policies: { limit: 5, window: '15m' }, namespace: 'login' });
    for (let i = 0; i < 5; i++) await login.consume('abuser');
    expect((await login.consume('abuser')).allowed).toBe(false);
    // 2 new clients a millisecond, each full again only after 10 minutes: the store fills up after 5 s
    // and must then forget a bucket for every new one, for 100 s (20 times its size).
    const flood = createLimiter({ store, policies: { limit: 1, window: '10m' }, namespace: 'flood' });
    for (let i = 0; i < 200_000; i++) {
      if (i % 2 === 0) clock.nowMs++;
      await flood.consume(`client-${i}`);
    }
    expect(store.size).toBe(10_000);
    // The abuser's bucket (full in 15 minutes) was fuller-to-be than every flood bucket (10 minutes):
    // it was never the one forgotten, so its wait still holds.
    expect((await login.consume('abuser')).allowed).toBe(false);
    expect((await flood.peek('client-0')).decidedBy.remaining).toBe(1); // the oldest flood client went
  }, 60_000);

  it('evicts the bucket soonest full when none has refilled: never one that is limiting harder', async () => {
    const clock = clockAt(1_000_000);
    const store = new MemoryStore({ maxKeys: 3, clock: clock.now });
    const limiter = createLimiter({ store, policies: { limit: 10, window: '10s' } });
    await limiter.consume('a', { cost: 9 }); // full in 9 s
    await limiter.consume('b', { cost: 2 }); // full in 2 s
    await limiter.consume('c', { cost: 5 }); // full in 5 s
    await limiter.consume('a', { cost: 1 }); // a charge moves a later, which the heap sees lazily
    await limiter.consume('d', { cost: 3 }); // evicts b, the soonest full
    expect((await limiter.peek('b')).decidedBy.remaining).toBe(10);
    expect((await limiter.peek('a')).decidedBy.remaining).toBe(0);
    expect((await limiter.peek('c')).decidedBy.remaining).toBe(5);
    await limiter.refund('a', 10); // back to full: forgotten at once
    expect(store.size).toBe(2);
  });
});

describe('MemoryStore slots', () => {
  it("keeps every key's states when a limiter with more numbers per key starts sharing the store", async () => {
    const clock = clockAt(1_000_000);
    const store = new MemoryStore({ clock: clock.now });
    const narrow = createLimiter({ store, policies: { limit: 10, window: '1h' }, namespace: 'narrow' });
    for (let i = 0; i < 2000; i++) await narrow.consume(`client-${i}`, { cost: 1 + (i % 10) });
    // Three policies and a ban take 9 numbers a key, where the first limiter's took 2.
    const wide = createLimiter({
      store,
      policies: [
        { name: 'burst', limit: 3, window: '1s', algorithm: 'fixed-window' },
        { name: 'hour', limit: 50, window: '1h', algorithm: 'sliding-window' },
        { name: 'day', limit: 500, window: '1d' },
      ],
      ban: { after: 2, duration: '1m' },
      namespace: 'wide',
    });
    for (let i = 0; i < 3; i++) expect((await wide.consume('client-0')).allowed).toBe(true);
    for (let i = 0; i < 2000; i++) {
      expect((await narrow.peek(`client-${i}`)).decidedBy.remaining).toBe(10 - (1 + (i % 10)));
    }
    expect((await wide.consume('client-0')).reason).toBe('limited');
    expect((await wide.consume('client-0')).reason).toBe('banned');
    expect((await wide.peek('client-0')).policies.map((p) => p.remaining)).toEqual([0, 47, 497]);
  });

  it('gives a forgotten key a fresh state, whatever the slot it gets held before', async () => {
    const clock = clockAt(1_000_000);
    const store = new MemoryStore({ clock: clock.now });
    const limiter = createLimiter({ store, policies: { limit: 5, window: '1m' } });
    for (let i = 0; i < 100; i++) await limiter.consume(`old-${i}`, { cost: 4 });
    for (let i = 0; i < 100; i++) await limiter.refund(`old-${i}`, 4); // full again: forgotten, slots freed
    expect(store.size).toBe(0);
    for (let i = 0; i < 100; i++) expect((await limiter.consume(`new-${i}`)).decidedBy.remaining).toBe(4);
    expect(store.size).toBe(100);
  });
});

describe('MemoryStore subclasses', () => {
  it('calls an update() a subclass wraps, as for any store', async () => {
    const seen: string[] = [];
    class LoggingStore extends MemoryStore {
      override async update(request: Parameters<MemoryStore['update']>[0]) {
        seen.push(request.key);
        return super.update(request);
      }
    }
    const limiter = createLimiter({ store: new LoggingStore(), policies: { limit: 1, window: '1m' } });
    expect((await limiter.consume('a')).allowed).toBe(true);
    expect((await limiter.consume('a')).allowed).toBe(false);
    expect(seen).toEqual(['/a', '/a']);
  });
});
