/**
 * Reservations by id on the memory store, under an injected clock: the options checked, the id made or
 * given, settled once from another limiter or after a failed settle, a degraded reservation settled where
 * it was charged, maxOpen, and the memory store's books bounded by maxKeys. (The same on Redis, and
 * across processes: test/conformance and test/exactness.)
 */
import { describe, expect, it } from 'vitest';
import { createLimiter } from '../../src/limiter/limiter.js';
import type { LimiterOptions } from '../../src/limiter/limiter-options.js';
import { resolveZeroLimit, zeroLimiter } from '../../src/limiter/zero-limit.js';
import type { ReservationRequest, Store } from '../../src/model/store.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';

const START_MS = 1_700_000_000_000;
const POLICY = { limit: 10, window: '1m' } as const; // a token every 6 s

/** A memory store on a hand-moved clock whose operations can be made to fail. */
function failingStore(maxKeys?: number) {
  const clock = { nowMs: START_MS, now: () => clock.nowMs };
  const inner = new MemoryStore({ clock: clock.now, ...(maxKeys === undefined ? {} : { maxKeys }) });
  const state = { down: false };
  const asked: string[] = [];
  const store: Store = {
    local: true,
    clock: clock.now,
    update: (request) => (state.down ? Promise.reject(new Error('down')) : inner.update(request)),
    reset: (key, policies) => inner.reset(key, policies),
    reservation(request: ReservationRequest) {
      asked.push(`${request.mode} ${request.id}`);
      return state.down ? Promise.reject(new Error('down')) : inner.reservation(request);
    },
  };
  return { store, inner, clock, state, asked };
}

function setup(options: Partial<LimiterOptions> = {}, maxKeys?: number) {
  const failing = failingStore(maxKeys);
  const limiter = createLimiter({ store: failing.store, policies: POLICY, ...options });
  const other = createLimiter({ store: failing.store, policies: POLICY, ...options });
  const remaining = async () => (await other.peek('k')).decidedBy.remaining;
  return { ...failing, limiter, other, remaining };
}

describe('reserve with an id', () => {
  it('makes an unguessable id for `id: true`: 128 random bits, base64url', async () => {
    const { limiter } = setup();
    const ids = new Set<string | undefined>();
    for (let i = 0; i < 20; i++) ids.add((await limiter.reserve('k', 0.1, { id: true })).id);
    expect(ids.size).toBe(20);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect((await limiter.reserve('k', 1)).id).toBeUndefined(); // without one: settled here only
  });

  it('checks its options on every call, and maxOpen at construction', async () => {
    const { limiter } = setup();
    for (const id of ['', 'x'.repeat(201), 'a\nb', 42, false]) {
      await expect(limiter.reserve('k', 1, { id: id as string })).rejects.toMatchObject({
        code: 'TOLLGATE_INVALID_ARGUMENT',
      });
    }
    await expect(limiter.reserve('k', 1, { id: 'a', ttl: '31d' })).rejects.toThrow(/30 days or less/);
    await expect(limiter.reserve('k', 1, { id: 'a', ttl: 0 })).rejects.toThrow(/ttl/);
    await expect(limiter.reserve('k', 1, { ttl: '1m' })).rejects.toThrow(/give it an id too/);
    await expect(limiter.settle('k', '', 1)).rejects.toThrow(/id/);
    await expect(limiter.settle('k', 'a', -1)).rejects.toThrow(/actualCost/);
    for (const maxOpen of [0, 1.5, '10', -1]) {
      expect(() => createLimiter({ policies: POLICY, maxOpen: maxOpen as number })).toThrow(
        /createLimiter: maxOpen must be a positive whole number/,
      );
    }
    expect(await limiter.settle('k', 'a', 1)).toEqual({ settled: false, reason: 'unknown' }); // nothing made
  });

  it('needs a store that keeps reservations, and a policy without slices', async () => {
    const bare: Store = { update: (r) => new MemoryStore().update(r), reset: async () => {} };
    const limiter = createLimiter({ store: bare, policies: POLICY });
    await expect(limiter.reserve('k', 1, { id: 'a' })).rejects.toThrow(/store that keeps them/);
    await expect(limiter.settle('k', 'a', 1)).rejects.toThrow(/store that keeps them/);
    const sliced = createLimiter({ policies: { ...POLICY, algorithm: 'fixed-window', slice: { size: 2 } } });
    await expect(sliced.reserve('k', 1, { id: 'a' })).rejects.toThrow(/without slices/);
  });

  it('settles once through the reservation, after a settle the store failed, however often it is retried', async () => {
    const { limiter, state, remaining, asked } = setup();
    const reservation = await limiter.reserve('k', 4, { id: 'job' });
    state.down = true;
    await expect(reservation.settle(1)).rejects.toThrow('down');
    state.down = false;
    await reservation.settle(1); // still open here: settled now
    await reservation.settle(1); // closed here: the store is not asked
    expect(asked).toEqual(['reserve job', 'settle job', 'settle job']);
    expect(await remaining()).toBe(9);
  });

  it('a degraded reservation settles where it was charged; the store never heard of it', async () => {
    const { limiter, other, state, asked } = setup();
    state.down = true;
    const reservation = await limiter.reserve('k', 4, { id: 'job' });
    expect(reservation).toMatchObject({ id: 'job', decision: { allowed: true, degraded: true } });
    state.down = false;
    expect(await other.settle('k', 'job', 1)).toEqual({ settled: false, reason: 'unknown' });
    await reservation.settle(12);
    expect(asked).toEqual(['reserve job', 'settle job']); // the in-process settle asked no store
    state.down = true;
    // The insurance owes 2 (10 - 12) and wants 1: 3 tokens at one per 6 s.
    expect((await limiter.peek('k')).retryAfterMs).toBe(18_000);
  });

  it('maxOpen refuses uncharged, until the oldest open one ends', async () => {
    const { limiter, clock, remaining } = setup({ maxOpen: 1 });
    await limiter.reserve('k', 1, { id: 'a', ttl: '30s' });
    const refused = await limiter.reserve('k', 1, { id: 'b' });
    expect(refused.decision).toMatchObject({ allowed: false, reason: 'too-many-open', retryAfterMs: 30_000 });
    await refused.settle(5); // nothing was charged: nothing to settle
    expect(await remaining()).toBe(9);
    clock.nowMs += 30_000;
    expect((await limiter.reserve('k', 1, { id: 'b' })).decision.allowed).toBe(true);
  });

  it('the memory store keeps books for at most maxKeys keys', async () => {
    const { limiter, inner, clock } = setup({}, 2);
    const request = { policies: limiter.policies, maxOpen: 10, maxExtraTokens: 1e9, ttlMs: 60_000 };
    await limiter.reserve('a', 1, { id: 'x', ttl: '10s' });
    await limiter.reserve('b', 1, { id: 'x' });
    clock.nowMs += 10_000; // a's ends: its book goes first
    await limiter.reserve('c', 1, { id: 'x' });
    expect(await limiter.settle('b', 'x', 1)).toMatchObject({ settled: true });
    await limiter.reserve('d', 1, { id: 'x' }); // b's book holds a settled one; the oldest goes
    const settleOf = (key: string) =>
      inner.reservation({ ...request, key: `/${key}`, mode: 'settle', id: 'x', cost: 1 });
    expect((await settleOf('b')).outcome).toBe('unknown'); // forgotten: it would say 'already-settled'
    expect((await settleOf('c')).outcome).toBe('settled');
    expect((await settleOf('d')).outcome).toBe('settled');
  });

  it('a limit of 0 refuses it, and knows no reservation', async () => {
    const limiter = zeroLimiter(resolveZeroLimit({ limit: 0, window: '1m' }, ''), undefined, 'closed');
    const reservation = await limiter.reserve('k', 1, { id: 'job' });
    expect(reservation).toMatchObject({ id: 'job', decision: { allowed: false } });
    expect(await limiter.settle('k', 'job', 0)).toEqual({ settled: false, reason: 'unknown' });
    expect(await limiter.cancel('k', 'job')).toEqual({ settled: false, reason: 'unknown' });
  });
});
