/**
 * The conformance table for reservations by id: reserved in one limiter, settled from another on the same
 * store (as another process would), charged once however many settles come, forgotten after their ttl,
 * bounded by maxOpen; alike on every store, under an injected clock.
 */
import { createLimiter, type Limiter, type LimiterOptions, type Policy } from '@tollgate/core';
import { expect } from 'vitest';
import type { Scenario } from './scenarios.js';
import type { StoreFixture } from './store-fixtures.js';

/** A second limiter of the same policies on the scenario's store: another process, as far as it knows. */
function another(policies: Policy | Policy[], { store }: StoreFixture, more: Partial<LimiterOptions> = {}) {
  return createLimiter({ store, policies, onStoreError: 'throw', denyCache: false, ...more });
}

/** Whole tokens `limiter` has left on `key`. */
async function left(limiter: Limiter, key = 'k'): Promise<number> {
  return (await limiter.peek(key)).decidedBy.remaining;
}

const TEN_A_MINUTE: Policy = { limit: 10, window: '1m' };
const TWO_POLICIES: Policy[] = [
  { limit: 10, window: '1m', name: 'minute' },
  { limit: 100, window: '1h', algorithm: 'fixed-window', name: 'hour' },
];

export const reservationScenarios: Scenario[] = [
  {
    name: 'by id: settled from another limiter, twice and once more: charged the difference exactly once',
    policies: TEN_A_MINUTE,
    async run(limiter, fixture) {
      const reservation = await limiter.reserve('k', 6, { id: 'job-1' });
      expect(reservation).toMatchObject({ id: 'job-1', decision: { allowed: true } });
      const b = another(TEN_A_MINUTE, fixture);
      expect(await b.settle('k', 'job-1', 2)).toEqual({ settled: true, reservedCost: 6 });
      expect(await b.settle('k', 'job-1', 2)).toEqual({ settled: false, reason: 'settled' });
      expect(await another(TEN_A_MINUTE, fixture).cancel('k', 'job-1')).toEqual({
        settled: false,
        reason: 'settled',
      });
      await reservation.settle(9); // the process that reserved, late: nothing more
      expect(await left(limiter)).toBe(8); // 2 charged, once
    },
  },
  {
    name: 'by id: a settle above the reservation charges the rest, into debt; cancel gives it all back',
    policies: TWO_POLICIES,
    async run(limiter, fixture) {
      const b = another(TWO_POLICIES, fixture);
      await limiter.reserve('k', 4, { id: 'a' });
      await limiter.reserve('k', 4, { id: 'b' });
      expect(await b.settle('k', 'a', 12)).toEqual({ settled: true, reservedCost: 4 });
      const after = await b.peek('k'); // (the first limiter's deny cache may hold what it saw)
      expect(after.policies.map((p) => p.remaining)).toEqual([0, 84]); // 16 charged to both
      expect(after.retryAfterMs).toBe(42_000); // 6 owed, then the token: 7 × 6 s
      expect(await b.cancel('k', 'b')).toEqual({ settled: true, reservedCost: 4 });
      expect((await b.peek('k')).policies.map((p) => p.remaining)).toEqual([0, 88]);
      expect(await b.settle('k', 'b', 1)).toEqual({ settled: false, reason: 'settled' });
    },
  },
  {
    name: 'by id: an unknown id, a refused reservation, and one past its ttl change nothing',
    policies: TEN_A_MINUTE,
    async run(limiter, { clock }) {
      expect(await limiter.settle('k', 'never', 1)).toEqual({ settled: false, reason: 'unknown' });
      await limiter.consume('k', { cost: 9 });
      const refused = await limiter.reserve('k', 5, { id: 'too-big' });
      expect(refused.decision).toMatchObject({ allowed: false, reason: 'limited' });
      expect(await limiter.settle('k', 'too-big', 0)).toEqual({ settled: false, reason: 'unknown' });
      clock.advance(60_000); // full again
      await limiter.reserve('k', 3, { id: 'forgotten', ttl: '10s' });
      clock.advance(10_000); // its ttl ends: it stays charged, and is forgotten
      expect(await limiter.settle('k', 'forgotten', 0)).toEqual({ settled: false, reason: 'unknown' });
      expect(await left(limiter)).toBe(8); // 3 charged, 1 refilled in 10 s
    },
  },
  {
    name: 'by id: a refund never reaches into a later window',
    policies: { limit: 10, window: 1_500, algorithm: 'fixed-window' },
    async run(limiter, fixture) {
      await limiter.reserve('k', 10, { id: 'stream' });
      fixture.clock.advance(1_500); // the window turns
      for (let i = 0; i < 4; i++) await limiter.consume('k');
      const b = another({ limit: 10, window: 1_500, algorithm: 'fixed-window' }, fixture);
      expect(await b.settle('k', 'stream', 0)).toEqual({ settled: true, reservedCost: 10 });
      expect(await left(limiter)).toBe(6); // nothing given to the new window
    },
  },
  {
    name: 'by id: maxOpen bounds the open reservations per key; a settle, a cancel or a ttl frees a place',
    policies: { limit: 100, window: '1m' },
    async run(_limiter, fixture) {
      const limiter = another({ limit: 100, window: '1m' }, fixture, { maxOpen: 2 });
      await limiter.reserve('k', 1, { id: 'one', ttl: '30s' });
      fixture.clock.advance(5_000);
      await limiter.reserve('k', 1, { id: 'two', ttl: '1m' });
      const third = await limiter.reserve('k', 1, { id: 'three' });
      expect(third.decision).toMatchObject({ allowed: false, reason: 'too-many-open', retryAfterMs: 25_000 });
      expect(await limiter.settle('k', 'three', 1)).toEqual({ settled: false, reason: 'unknown' });
      expect(await left(limiter)).toBe(99); // 'one' refilled; the refused one charged nothing
      expect((await limiter.reserve('other', 1, { id: 'three' })).decision.allowed).toBe(true); // per key
      await limiter.cancel('k', 'two');
      expect((await limiter.reserve('k', 1, { id: 'three' })).decision.allowed).toBe(true);
      expect((await limiter.reserve('k', 1, { id: 'four' })).decision.reason).toBe('too-many-open');
      fixture.clock.advance(25_000); // 'one' ends unsettled
      expect((await limiter.reserve('k', 1, { id: 'four' })).decision.allowed).toBe(true);
    },
  },
  {
    name: 'by id: an id in use on the key, open or settled, is refused and charges nothing',
    policies: TEN_A_MINUTE,
    async run(limiter) {
      await limiter.reserve('k', 2, { id: 'dup' });
      await expect(limiter.reserve('k', 2, { id: 'dup' })).rejects.toMatchObject({
        code: 'TOLLGATE_INVALID_ARGUMENT',
      });
      await limiter.settle('k', 'dup', 2);
      await expect(limiter.reserve('k', 2, { id: 'dup' })).rejects.toThrow(/already used/);
      expect(await left(limiter)).toBe(8);
    },
  },
];
