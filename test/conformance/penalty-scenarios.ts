/**
 * The conformance table for `exponentialBackoff` and `continueExceeding`: every scenario runs unchanged on
 * every store (memory, Redis, Redis Cluster, each client), under an injected clock, so the Lua and the
 * TypeScript agree to the millisecond.
 */
import type { Limiter } from '@tollgate/core';
import { expect } from 'vitest';
import type { Scenario } from './scenarios.js';

/** The `retryAfterMs` of `times` refused consumes in a row. */
async function refusedWaits(limiter: Limiter, times: number): Promise<(number | undefined)[]> {
  const waits: (number | undefined)[] = [];
  for (let i = 0; i < times; i++) {
    const decision = await limiter.consume('k');
    expect(decision.allowed).toBe(false);
    waits.push(decision.retryAfterMs);
  }
  return waits;
}

export const penaltyScenarios: Scenario[] = [
  {
    name: 'exponentialBackoff: each refusal in a row doubles the wait, a held-back check is refused, an admission ends the streak',
    policies: { limit: 1, window: '1s' },
    penalties: { exponentialBackoff: true },
    async run(limiter, { clock }) {
      expect((await limiter.consume('k')).allowed).toBe(true);
      expect(await refusedWaits(limiter, 3)).toEqual([1_000, 2_000, 4_000]);
      expect(await limiter.peek('k')).toMatchObject({ allowed: false, retryAfterMs: 4_000 }); // not counted
      clock.advance(3_999); // the bucket is full, but the client is held back: one more refusal
      expect(await limiter.consume('k')).toMatchObject({
        allowed: false,
        reason: 'limited',
        retryAfterMs: 8_000,
      });
      clock.advance(8_000);
      expect((await limiter.consume('k')).allowed).toBe(true);
      expect(await refusedWaits(limiter, 1)).toEqual([1_000]); // a new streak
    },
  },
  {
    name: 'exponentialBackoff: a streak ends with the state that kept it, whether the store has forgotten it yet or not',
    policies: { limit: 1, window: '1s' },
    penalties: { exponentialBackoff: true },
    async run(limiter, { clock }) {
      expect((await limiter.consume('k')).allowed).toBe(true);
      expect(await refusedWaits(limiter, 1)).toEqual([1_000]);
      clock.advance(1_000); // the bucket is full and the hold over: the key says no more than a fresh one
      await limiter.penalty('k', 1); // charged, not admitted: it does not end the streak itself
      expect(await refusedWaits(limiter, 1)).toEqual([1_000]); // a new streak: not doubled
    },
  },
  {
    name: 'exponentialBackoff: the wait stops doubling at 1024 × the first',
    policies: { limit: 1, window: '1s' },
    penalties: { exponentialBackoff: true },
    async run(limiter) {
      await limiter.consume('k');
      const waits = await refusedWaits(limiter, 13);
      expect(waits.slice(0, 3)).toEqual([1_000, 2_000, 4_000]);
      expect(waits.slice(10)).toEqual([1_024_000, 1_024_000, 1_024_000]);
    },
  },
  {
    name: 'exponentialBackoff: the base is the policies’ wait at the first refusal; a cost too large counts for nothing',
    policies: { limit: 2, window: '10s', algorithm: 'fixed-window' },
    penalties: { exponentialBackoff: true },
    async run(limiter, { clock }) {
      await limiter.consume('k');
      await limiter.consume('k');
      clock.advance(4_000);
      expect((await limiter.consume('k', { cost: 3 })).reason).toBe('cost-exceeds-capacity');
      expect(await refusedWaits(limiter, 2)).toEqual([6_000, 12_000]);
      clock.advance(12_000);
      expect((await limiter.consume('k')).allowed).toBe(true);
    },
  },
  {
    name: 'exponentialBackoff: concurrent refusals on one key each count (on Redis, one batch, one script call)',
    policies: { limit: 1, window: '1s' },
    penalties: { exponentialBackoff: true, continueExceeding: true },
    async run(limiter) {
      const decisions = await Promise.all(Array.from({ length: 6 }, () => limiter.consume('k')));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(1);
      const waits = decisions.filter((d) => !d.allowed).map((d) => d.retryAfterMs as number);
      // Each refusal owes a token (continueExceeding), so the streak's base is 2 s.
      expect(waits.sort((x, y) => x - y)).toEqual([2_000, 4_000, 8_000, 16_000, 32_000]);
    },
  },
  {
    name: 'continueExceeding: a refusal starts a fixed window again now, its count kept',
    policies: { limit: 2, window: '10s', algorithm: 'fixed-window' },
    penalties: { continueExceeding: true },
    async run(limiter, { clock }) {
      await limiter.consume('k');
      await limiter.consume('k');
      clock.advance(9_000);
      expect(await refusedWaits(limiter, 1)).toEqual([10_000]); // not 1 000: the window restarted
      clock.advance(9_999);
      expect(await refusedWaits(limiter, 1)).toEqual([10_000]);
      clock.advance(10_000);
      expect((await limiter.consume('k')).allowed).toBe(true);
      expect((await limiter.consume('k')).allowed).toBe(true);
    },
  },
  {
    name: 'continueExceeding: a token bucket is charged each refusal as debt, down to one full bucket owed',
    policies: { limit: 10, window: '10s' },
    penalties: { continueExceeding: true },
    async run(limiter, { clock }) {
      await limiter.consume('k', { cost: 10 });
      const waits = await refusedWaits(limiter, 12);
      expect(waits.slice(0, 3)).toEqual([2_000, 3_000, 4_000]); // 1 s a token, each refusal one more owed
      expect(waits.slice(9)).toEqual([11_000, 11_000, 11_000]); // 10 owed, then the one asked for
      expect((await limiter.consume('k', { cost: 11 })).reason).toBe('cost-exceeds-capacity');
      clock.advance(10_999); // 1 unit short of a token: refused, and it owes that token again
      expect(await refusedWaits(limiter, 1)).toEqual([1_001]);
      clock.advance(1_001);
      expect((await limiter.consume('k')).allowed).toBe(true);
    },
  },
  {
    name: 'continueExceeding: a sliding window counts each refusal in its current window, up to the limit',
    policies: { limit: 4, window: '10s', algorithm: 'sliding-window' },
    penalties: { continueExceeding: true },
    async run(limiter, { clock }) {
      clock.advance(5_000);
      for (let i = 0; i < 4; i++) expect((await limiter.consume('k')).allowed).toBe(true);
      clock.advance(10_000); // half of the previous window's 4 still counts: 2 fit
      expect((await limiter.consume('k', { cost: 2 })).allowed).toBe(true);
      // Counted 3, then 4 (the limit), then still 4: without continueExceeding the wait would be 2 500.
      expect(await refusedWaits(limiter, 3)).toEqual([5_000, 7_500, 7_500]);
      clock.advance(7_500);
      expect((await limiter.consume('k')).allowed).toBe(true);
    },
  },
  {
    name: 'penalties with a ban and several policies: each counted, the longest wait answered',
    policies: [
      { limit: 1, window: '10s', algorithm: 'fixed-window', name: 'fixed' },
      { limit: 5, window: '1m', name: 'bucket' },
    ],
    ban: { after: 3, duration: '1h' },
    penalties: { exponentialBackoff: true, continueExceeding: true },
    async run(limiter, fixture) {
      const { clock } = fixture;
      expect((await limiter.consume('k')).allowed).toBe(true);
      clock.advance(5_000);
      // The fixed window restarts at each refusal (10 s), and the backoff doubles from there.
      expect(await refusedWaits(limiter, 2)).toEqual([10_000, 20_000]);
      const third = await limiter.consume('k');
      expect(third).toMatchObject({ allowed: false, reason: 'banned', retryAfterMs: 3_600_000 });
      const [ttl] = (await fixture.storedTtls?.()) ?? [3_600_000];
      expect(ttl).toBeGreaterThan(3_500_000); // kept as long as the ban lasts
      clock.advance(3_600_000);
      expect((await limiter.consume('k')).allowed).toBe(true);
      expect(await refusedWaits(limiter, 1)).toEqual([10_000]); // the streak ended with the admission
    },
  },
];
