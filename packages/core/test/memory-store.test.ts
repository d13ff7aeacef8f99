import { describe, expect, it } from 'vitest';
import { createLimiter } from '../src/limiter.js';
import { MemoryStore } from '../src/stores/memory/memory-store.js';

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
