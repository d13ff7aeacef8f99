/**
 * The conformance table for refunds that come late: a reservation settled, or a request given back, after
 * the window it was charged in has turned gives back no more than its charge still holds, on every store.
 * And penalties too large for a store to count: both stores answer alike, neither fails.
 */
import type { Limiter } from '@tollgate/core';
import { expect } from 'vitest';
import type { Scenario } from './scenarios.js';

/** How many of `times` consumes in a row are admitted. */
async function admitted(limiter: Limiter, times: number, cost = 1): Promise<number> {
  let count = 0;
  for (let i = 0; i < times; i++) if ((await limiter.consume('k', { cost })).allowed) count++;
  return count;
}

export const refundScenarios: Scenario[] = [
  {
    name: 'refund: a fixed-window reservation settled after its window has turned gives nothing to the new window',
    policies: { limit: 10, window: 1_500, algorithm: 'fixed-window' },
    async run(limiter, { clock }) {
      const reservation = await limiter.reserve('k', 10); // a streamed request holds the whole window
      expect(reservation.decision.allowed).toBe(true);
      clock.advance(1_500); // the window turns while the stream is open
      expect(await admitted(limiter, 10)).toBe(10); // the new window is spent
      await reservation.settle(0); // the client hangs up: nothing used, but its window is over
      expect(await admitted(limiter, 10)).toBe(0);
    },
  },
  {
    name: 'refund: a fixed-window refund in the window it was charged in gives the cost back',
    policies: { limit: 10, window: '1m', algorithm: 'fixed-window' },
    async run(limiter, { clock }) {
      const reservation = await limiter.reserve('k', 10);
      clock.advance(30_000); // (a Redis key lives by the real clock: it must outlive the test)
      await reservation.settle(4);
      expect(await admitted(limiter, 10)).toBe(6);
    },
  },
  {
    name: 'refund: a token bucket gets back the cost less what it refilled since the charge',
    policies: { limit: 10, window: '1s' }, // burst 10, a token every 100 ms
    async run(limiter, { clock }) {
      const reservation = await limiter.reserve('k', 10);
      clock.advance(200); // two tokens refilled
      expect(await admitted(limiter, 3)).toBe(2);
      await reservation.cancel(); // gives back 10 - 2
      expect(await admitted(limiter, 10)).toBe(8);
      clock.advance(1_000);
      const late = await limiter.reserve('k', 10);
      expect(late.decision.allowed).toBe(true);
      clock.advance(1_000); // the bucket refilled the whole charge: nothing is left to give back
      await late.cancel();
      expect(await admitted(limiter, 11)).toBe(10);
    },
  },
  {
    name: 'refund: a sliding window takes a late refund from the window that counted it, and none older',
    policies: { limit: 10, window: '1s', algorithm: 'sliding-window' },
    async run(limiter, { clock }) {
      clock.set(1_767_225_600_000 + 900); // 900 ms into a window
      const reservation = await limiter.reserve('k', 10);
      clock.advance(200); // 100 ms into the next: the previous window still weighs 9 of its 10
      expect(await admitted(limiter, 2)).toBe(1);
      await reservation.cancel(); // taken back from the previous window
      expect(await admitted(limiter, 10)).toBe(9);
      clock.set(1_767_225_600_000 + 3_900);
      const old = await limiter.reserve('k', 10);
      clock.advance(2_000); // two windows on: the charge counts no more
      expect(await admitted(limiter, 10)).toBe(10);
      await old.cancel();
      expect(await admitted(limiter, 1)).toBe(0);
    },
  },
  {
    name: 'refund: limiter.refund with chargedAtMs gives back what the charge still holds; without it, the cost',
    policies: { limit: 3, window: '1m', algorithm: 'fixed-window' },
    async run(limiter, { clock }) {
      const first = await limiter.consume('k');
      clock.advance(60_000);
      expect(await admitted(limiter, 3)).toBe(3);
      await limiter.refund('k', 1, { chargedAtMs: first.decidedAtMs });
      expect(await admitted(limiter, 1)).toBe(0);
      await limiter.refund('k', 1); // a reward
      expect(await admitted(limiter, 2)).toBe(1);
    },
  },
  {
    name: 'penalty: a cost past what a store counts exactly leaves the same finite wait on every store',
    policies: { limit: 100, window: '1m' },
    async run(limiter) {
      const afterHuge = await limiter.penalty('k', 2 ** 53);
      // The debt stops at the capacity less 2^53 - 1 units: the wait stays a whole number of ms.
      const floorUnits = 100 * 60_000 - Number.MAX_SAFE_INTEGER;
      const waitMs = Math.ceil((60_000 - floorUnits) / 100);
      expect(afterHuge).toMatchObject({ allowed: false, retryAfterMs: waitMs });
      expect(await limiter.penalty('k', 1e308)).toMatchObject({ allowed: false, retryAfterMs: waitMs });
      expect(Number.isSafeInteger(waitMs)).toBe(true);
    },
  },
  {
    name: 'call options: an option a method does not take is refused, not ignored',
    policies: { limit: 3, window: '1m' },
    async run(limiter) {
      const options = { maxWait: 3_000 } as never;
      await expect(limiter.consume('k', { timeout: 3_000 } as never)).rejects.toThrow(
        /consume: unknown option 'timeout'/,
      );
      await expect(limiter.peek('k', options)).rejects.toThrow(/peek: unknown option 'maxWait'/);
      await expect(limiter.reserve('k', 1, { cost: 2 } as never)).rejects.toThrow(
        /reserve: unknown option 'cost'/,
      );
      await expect(limiter.refund('k', 1, { degrade: true } as never)).rejects.toThrow(
        /did you mean degraded/,
      );
      expect(await admitted(limiter, 4)).toBe(3); // nothing refused was charged
    },
  },
];
