import { describe, expect, it } from 'vitest';
import { createLimiter } from '../../../src/limiter/limiter.js';
import type { AlgorithmName } from '../../../src/model/policy.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';

function clockAt(startMs: number) {
  const clock = { nowMs: startMs, now: () => clock.nowMs };
  return clock;
}

const ALGORITHMS: AlgorithmName[] = ['token-bucket', 'fixed-window', 'sliding-window'];
const FIFTEEN_MINUTES_MS = 15 * 60_000;
const HOUR_MS = 60 * 60_000;
/** 30 s before a 15-minute boundary: a sliding window rolls over during the flood, its weight still 5. */
const BEFORE_ROLLOVER_MS = 2_000 * FIFTEEN_MINUTES_MS - 30_000;

describe('MemoryStore eviction frees exhausted windows (regression)', () => {
  it.each(ALGORITHMS)(
    '%s: user:admin, exhausted, regains nothing through a flood of 5000 made-up user names',
    async (algorithm) => {
      const clock = clockAt(BEFORE_ROLLOVER_MS);
      const store = new MemoryStore({ maxKeys: 1000, clock: clock.now });
      const policies = { limit: 5, window: '15m', algorithm } as const;
      const login = createLimiter({ store, policies, namespace: 'login' });
      for (let i = 0; i < 5; i++) expect((await login.consume('user:admin')).allowed).toBe(true);
      expect((await login.peek('user:admin')).allowed).toBe(false); // exhausted, though never refused yet
      clock.nowMs += 60_000;
      for (let i = 0; i < 5000; i++) {
        clock.nowMs++;
        await login.consume(`user:made-up-${i}`);
      }
      expect(store.size).toBe(1000);
      const after = await login.consume('user:admin');
      expect(after.allowed).toBe(false);
      expect(after.decidedBy.remaining).toBe(0);
    },
  );

  it('keeps a ban through a flood of keys that count for longer, though the bucket has refilled', async () => {
    const clock = clockAt(BEFORE_ROLLOVER_MS);
    const store = new MemoryStore({ maxKeys: 1000, clock: clock.now });
    const login = createLimiter({
      store,
      policies: { limit: 5, window: '15m' },
      ban: { after: 1, duration: '1h' },
      namespace: 'login',
    });
    for (let i = 0; i < 5; i++) await login.consume('user:admin');
    await login.consume('user:admin'); // refused: banned for an hour
    clock.nowMs += FIFTEEN_MINUTES_MS; // the bucket is full again; only the ban holds
    // Each signup key is idle in 2 h, later than the ban's end: soonest idle alone would forget the ban.
    const signup = createLimiter({
      store,
      policies: { limit: 10, window: '2h', algorithm: 'fixed-window' },
      namespace: 'signup',
    });
    for (let i = 0; i < 5000; i++) {
      clock.nowMs++;
      await signup.consume(`made-up-${i}`);
    }
    expect(store.size).toBe(1000);
    expect((await login.consume('user:admin')).reason).toBe('banned');
  });
});

describe('MemoryStore eviction when every key is exhausted', () => {
  it.each(ALGORITHMS)('%s: stays bounded, and forgets the key recovering soonest', async (algorithm) => {
    const clock = clockAt(1_000 * HOUR_MS); // on every window's boundary: sliding windows start now
    const store = new MemoryStore({ maxKeys: 3, clock: clock.now });
    const per = (window: string) =>
      createLimiter({ store, policies: { limit: 1, window, algorithm }, namespace: window });
    const [minute, tenMinutes, hour] = [per('1m'), per('10m'), per('1h')];
    await hour.consume('c');
    await minute.consume('a'); // each is exhausted by its one request
    await tenMinutes.consume('b');
    await hour.consume('d'); // evicts a, back in 1 (sliding: 2) minutes
    expect(store.size).toBe(3);
    expect((await minute.peek('a')).decidedBy.remaining).toBe(1);
    await hour.consume('e'); // then b
    expect(store.size).toBe(3);
    expect((await tenMinutes.peek('b')).decidedBy.remaining).toBe(1);
    for (const key of ['c', 'd', 'e']) expect((await hour.peek(key)).allowed, key).toBe(false);
    for (let i = 0; i < 5000; i++) {
      clock.nowMs++;
      await hour.consume(`made-up-${i}`);
      if (store.size > 3) throw new Error(`${store.size} keys held after ${i + 1} made-up ones`);
    }
  });
});

describe('MemoryStore eviction tiers', () => {
  it('forgets an exhausted key whose window has ended before a key that is still counting', async () => {
    const clock = clockAt(1_000_000);
    const store = new MemoryStore({ maxKeys: 2, clock: clock.now });
    const short = createLimiter({
      store,
      policies: { limit: 1, window: '1m', algorithm: 'fixed-window' },
      namespace: 'short',
    });
    const long = createLimiter({ store, policies: { limit: 5, window: '1h' }, namespace: 'long' });
    await short.consume('a'); // exhausted for a minute
    await long.consume('b');
    clock.nowMs += 2 * 60_000; // a is over; b still counts
    await long.consume('c');
    expect(store.size).toBe(2);
    expect((await long.peek('b')).decidedBy.remaining).toBe(4);
  });

  it('moves a key that recovers by a refund back among the keys to evict first', async () => {
    const clock = clockAt(1_000_000);
    const store = new MemoryStore({ maxKeys: 2, clock: clock.now });
    const limiter = createLimiter({ store, policies: { limit: 5, window: '1h' } });
    await limiter.consume('a', { cost: 5 }); // exhausted
    await limiter.refund('a', 4); // 4 left: full again in 12 minutes
    clock.nowMs++;
    await limiter.consume('b'); // 4 left: full again 1 ms later than a
    await limiter.consume('c'); // evicts a, the soonest full of the keys that admit
    expect((await limiter.peek('a')).decidedBy.remaining).toBe(5);
    expect((await limiter.peek('b')).decidedBy.remaining).toBe(4);
  });
});
