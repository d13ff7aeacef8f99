/**
 * `limiter.reserve`: a cost charged before the work and settled to the true cost after it, in one store
 * step, where the reservation was charged; settle and cancel count once, never throw, and a bucket may
 * owe as far as its algorithm can say so.
 */
import { describe, expect, it } from 'vitest';
import { createLimiter } from '../../src/limiter/limiter.js';
import type { LimiterOptions } from '../../src/limiter/limiter-options.js';
import { maxExtraTokensOf } from '../../src/limiter/reservation.js';
import { resolveZeroLimit, zeroLimiter } from '../../src/limiter/zero-limit.js';
import type { BucketRequest, Store } from '../../src/model/store.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';

const START_MS = 1_700_000_000_000;

/** A memory store on a hand-moved clock that records every request it is asked, and can fail. */
function recordingStore() {
  const clock = { nowMs: START_MS, now: () => clock.nowMs };
  const inner = new MemoryStore({ clock: clock.now });
  const requests: BucketRequest[] = [];
  const state = { down: false };
  const store: Store = {
    local: true,
    clock: clock.now,
    update(request) {
      requests.push(request);
      return state.down ? Promise.reject(new Error('down')) : inner.update(request);
    },
    reset: (key, policies) => inner.reset(key, policies),
  };
  const modes = () => requests.map(({ mode, cost }) => `${mode} ${cost}`);
  return { store, clock, state, requests, modes };
}

function setup(options: Partial<LimiterOptions> = {}) {
  const recording = recordingStore();
  const limiter = createLimiter({
    store: recording.store,
    policies: { limit: 10, window: '1m' }, // a token every 6 s
    ...options,
  });
  const remaining = async () => (await limiter.peek('k')).decidedBy.remaining;
  return { ...recording, limiter, remaining };
}

describe('reserve', () => {
  it('charges the reserved cost as consume does, all or none', async () => {
    const { limiter, remaining } = setup();
    const reservation = await limiter.reserve('k', 4);
    expect(reservation.decision).toMatchObject({ allowed: true, cost: 4, reason: 'allowed' });
    expect(await remaining()).toBe(6);
    const refused = await limiter.reserve('k', 7);
    expect(refused.decision).toMatchObject({ allowed: false, reason: 'limited', retryAfterMs: 6_000 });
    expect(await remaining()).toBe(6);
  });

  it.each([undefined, 0, -1, Number.NaN, '4'])('rejects a reserved cost of %j', async (cost) => {
    const { limiter } = setup();
    await expect(limiter.reserve('k', cost as never)).rejects.toThrow(TypeError);
  });

  it('settles above the reservation in one penalty step: the bucket owes, and the client waits longer', async () => {
    const { limiter, modes, remaining } = setup();
    const reservation = await limiter.reserve('k', 4);
    await reservation.settle(13);
    expect(modes()).toEqual(['consume 4', 'penalty 9']);
    expect(await remaining()).toBe(0); // 10 - 13: three tokens owed, shown as none left
    // Owing 3 and wanting 1: 4 tokens at one per 6 s.
    expect((await limiter.peek('k')).retryAfterMs).toBe(24_000);
  });

  it('settles below the reservation in one refund step, never beyond capacity', async () => {
    const { limiter, modes, remaining, clock } = setup();
    const reservation = await limiter.reserve('k', 4);
    await reservation.settle(1);
    expect(modes()).toEqual(['consume 4', 'refund 3']);
    expect(await remaining()).toBe(9);
    const late = await limiter.reserve('k', 5);
    clock.nowMs += 60_000; // the bucket refilled meanwhile
    await late.settle(0);
    expect(await remaining()).toBe(10);
  });

  it('settling at the reserved cost asks the store nothing', async () => {
    const { limiter, modes } = setup();
    await (await limiter.reserve('k', 4)).settle(4);
    expect(modes()).toEqual(['consume 4']);
  });

  it('cancel gives the whole reservation back', async () => {
    const { limiter, modes, remaining } = setup();
    await (await limiter.reserve('k', 4)).cancel();
    expect(modes()).toEqual(['consume 4', 'refund 4']);
    expect(await remaining()).toBe(10);
  });

  it('counts the first settle or cancel only', async () => {
    const { limiter, modes, remaining } = setup();
    const reservation = await limiter.reserve('k', 4);
    await Promise.all([reservation.settle(2), reservation.settle(8), reservation.cancel()]);
    await reservation.cancel();
    expect(modes()).toEqual(['consume 4', 'refund 2']);
    expect(await remaining()).toBe(8);
  });

  it('a refused reservation has nothing to settle or cancel', async () => {
    const { limiter, modes } = setup();
    const refused = await limiter.reserve('k', 11);
    expect(refused.decision.reason).toBe('cost-exceeds-capacity');
    await expect(refused.settle(3)).resolves.toBeUndefined();
    await expect(refused.cancel()).resolves.toBeUndefined();
    expect(modes()).toEqual(['peek 11']);
  });

  it('a dry-run reservation the limiter would refuse was charged nothing, so settles nothing', async () => {
    const { limiter, remaining } = setup();
    await limiter.consume('k', { cost: 10 });
    const shadow = await limiter.reserve('k', 2, { dryRun: true });
    expect(shadow.decision.allowed).toBe(false);
    await shadow.settle(5);
    expect(await remaining()).toBe(0);
    expect((await limiter.peek('k')).retryAfterMs).toBe(6_000); // nothing owed
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY, '3', undefined])(
    'rejects an actual cost of %j with a TypeError and leaves the reservation open',
    async (actual) => {
      const { limiter, modes } = setup();
      const reservation = await limiter.reserve('k', 4);
      await expect(reservation.settle(actual as never)).rejects.toThrow(
        /actualCost must be a finite number, 0 or more/,
      );
      await reservation.settle(6);
      expect(modes()).toEqual(['consume 4', 'penalty 2']);
    },
  );

  it('a store that fails the settle rejects with its error; the reservation stays charged, and is not retried', async () => {
    const { limiter, modes, state, remaining } = setup();
    const reservation = await limiter.reserve('k', 4);
    state.down = true;
    await expect(reservation.settle(1)).rejects.toThrow('down');
    state.down = false;
    await reservation.settle(1);
    expect(modes()).toEqual(['consume 4', 'refund 3']);
    expect(await remaining()).toBe(6);
  });

  it('a degraded reservation settles on the insurance limiter, where it was charged', async () => {
    const { limiter, modes, state } = setup();
    state.down = true;
    const reservation = await limiter.reserve('k', 4);
    expect(reservation.decision).toMatchObject({ allowed: true, degraded: true });
    state.down = false;
    await reservation.settle(12);
    expect(modes()).toEqual(['consume 4']); // the store is not asked: it never took the 4
    const next = await limiter.reserve('k', 1); // the store, up again, is full
    expect(next.decision).toMatchObject({ allowed: true, degraded: false });
    state.down = true;
    // The insurance owes 2 (10 - 12) and wants 1: 3 tokens at one per 6 s.
    expect((await limiter.peek('k')).retryAfterMs).toBe(18_000);
  });

  it('settles every policy of the key together', async () => {
    const { limiter, modes } = setup({
      policies: [
        { limit: 10, window: '1m', name: 'minute' },
        { limit: 100, window: '1h', name: 'hour' },
      ],
    });
    await (await limiter.reserve('k', 4)).settle(9);
    expect(modes()).toEqual(['consume 4', 'penalty 5']);
    const { policies } = await limiter.peek('k');
    expect(policies.map((p) => p.remaining)).toEqual([1, 91]);
  });

  it('charges at most what the buckets can count exactly beyond the reservation', async () => {
    const { limiter, requests } = setup();
    await (await limiter.reserve('k', 1)).settle(Number.MAX_VALUE);
    const most = maxExtraTokensOf(limiter.policies);
    expect(most).toBe(150_119_987_569); // (2^53 - 1 - 600,000 units) / 60,000 units a token
    expect(requests.at(-1)).toMatchObject({ mode: 'penalty', cost: most });
    expect((await limiter.peek('k')).retryAfterMs).toBeGreaterThan(0);
  });

  it('a zero limit refuses the reservation, with nothing to settle', async () => {
    const limiter = zeroLimiter(resolveZeroLimit({ limit: 0, window: '1m' }, ''), () => START_MS, 'closed');
    const reservation = await limiter.reserve('k', 3);
    expect(reservation.decision).toMatchObject({ allowed: false, cost: 3, nearLimit: false });
    await expect(reservation.settle(1)).resolves.toBeUndefined();
  });
});

describe('the debt floor: what each algorithm can owe', () => {
  it('a token bucket owes without bound, and refills the debt at its rate', async () => {
    const { limiter, clock } = setup();
    await (await limiter.reserve('k', 10)).settle(30); // 20 owed
    clock.nowMs += 20 * 6_000;
    expect((await limiter.peek('k')).decidedBy.remaining).toBe(0);
    clock.nowMs += 6_000;
    expect((await limiter.peek('k')).decidedBy.remaining).toBe(1);
  });

  it('a fixed window owes until the window ends, then forgets the debt', async () => {
    const { limiter, clock } = setup({ policies: { limit: 10, window: '1m', algorithm: 'fixed-window' } });
    await (await limiter.reserve('k', 10)).settle(30);
    clock.nowMs += 59_999;
    expect((await limiter.consume('k')).allowed).toBe(false);
    clock.nowMs += 1;
    expect((await limiter.consume('k')).decidedBy.remaining).toBe(9);
  });

  it('a sliding window carries the debt into the next window, weighted, and forgets it after', async () => {
    const { limiter, clock } = setup({
      policies: { limit: 10, window: '1m', algorithm: 'sliding-window' },
    });
    clock.nowMs = Math.ceil(START_MS / 60_000) * 60_000; // at a window's start
    await (await limiter.reserve('k', 10)).settle(30);
    clock.nowMs += 60_000 + 45_000; // the previous 30 weigh a quarter: 7.5, and 1 more fits
    expect((await limiter.peek('k')).allowed).toBe(true);
    clock.nowMs -= 15_000; // half: 15, over the limit
    expect((await limiter.peek('k')).allowed).toBe(false);
    clock.nowMs += 90_000; // two windows on: forgotten
    expect((await limiter.peek('k')).decidedBy.remaining).toBe(10);
  });
});
