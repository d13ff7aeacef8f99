/** The conformance table for bans: every scenario runs unchanged on every store, under an injected clock. */
import { expect } from 'vitest';
import type { Scenario } from './scenarios.js';

export const banScenarios: Scenario[] = [
  {
    name: 'ban: refused `after` times in a row, a client is refused outright for the duration',
    policies: { limit: 2, window: '1h' },
    ban: { after: 3, duration: '10m' },
    async run(limiter, { clock }) {
      await limiter.consume('k');
      await limiter.consume('k');
      expect((await limiter.consume('k')).reason).toBe('limited');
      expect((await limiter.consume('k')).reason).toBe('limited');
      const third = await limiter.consume('k');
      expect(third).toMatchObject({ allowed: false, reason: 'banned', retryAfterMs: 1_800_000 }); // the bucket's wait is longer
      clock.advance(1_800_000); // a token is back, but…
      expect((await limiter.consume('k')).allowed).toBe(true); // …the ban was shorter: over
    },
  },
  {
    name: 'ban: while it lasts, even a request that would fit is refused, and peek says so',
    policies: { limit: 10, window: '1s' },
    ban: { after: 1, duration: '1m' },
    async run(limiter, { clock }) {
      expect(await limiter.consume('k', { cost: 10 })).toMatchObject({ allowed: true });
      expect(await limiter.consume('k')).toMatchObject({ reason: 'banned', retryAfterMs: 60_000 });
      clock.advance(5_000); // the bucket is full again
      expect(await limiter.peek('k')).toMatchObject({
        allowed: false,
        reason: 'banned',
        retryAfterMs: 55_000,
      });
      expect(await limiter.consume('k')).toMatchObject({ reason: 'banned', retryAfterMs: 55_000 }); // not extended
      await limiter.refund('k', 10); // a refund does not lift a ban…
      expect((await limiter.consume('k')).reason).toBe('banned');
      await limiter.reset('k'); // …a reset does
      expect((await limiter.consume('k')).allowed).toBe(true);
    },
  },
  {
    name: 'ban: an admitted request starts the count again',
    policies: { limit: 1, window: '1s' },
    ban: { after: 3, duration: '1h' },
    async run(limiter, { clock }) {
      await limiter.consume('k');
      expect((await limiter.consume('k')).reason).toBe('limited');
      expect((await limiter.consume('k')).reason).toBe('limited'); // two in a row
      clock.advance(1_000);
      expect((await limiter.consume('k')).allowed).toBe(true); // the count starts again
      expect((await limiter.consume('k')).reason).toBe('limited');
      expect((await limiter.consume('k')).reason).toBe('limited'); // two, not four
      clock.advance(1_000);
      expect((await limiter.consume('k')).allowed).toBe(true);
    },
  },
  {
    name: 'ban: refusals in a row end with the state that kept them, whether the store has forgotten it yet or not',
    policies: { limit: 5, window: '2s', algorithm: 'fixed-window' },
    ban: { after: 2, duration: '1m' },
    async run(limiter, { clock }) {
      expect((await limiter.consume('k', { cost: 5 })).allowed).toBe(true);
      expect((await limiter.consume('k')).reason).toBe('limited'); // one in a row
      clock.advance(2_000); // the window is over: the key says no more than a fresh one
      await limiter.penalty('k', 3); // charged, not admitted: it does not start the count again itself
      expect((await limiter.consume('k', { cost: 3 })).reason).toBe('limited'); // one in a row, not two
      expect((await limiter.consume('k', { cost: 3 })).reason).toBe('banned');
    },
  },
  {
    name: 'ban: works with fixed and sliding windows, and expires with the key',
    policies: [
      { limit: 2, window: '1m', algorithm: 'fixed-window', name: 'fixed' },
      { limit: 3, window: '1m', algorithm: 'sliding-window', name: 'sliding' },
    ],
    ban: { after: 2, duration: '5m' },
    async run(limiter, fixture) {
      expect((await limiter.consume('k')).allowed).toBe(true);
      expect((await limiter.consume('k')).allowed).toBe(true);
      expect((await limiter.consume('k')).reason).toBe('limited');
      expect((await limiter.consume('k')).reason).toBe('banned');
      const [ttl] = (await fixture.storedTtls?.()) ?? [300_000];
      expect(ttl).toBeGreaterThan(240_000); // kept as long as the ban lasts
      fixture.clock.advance(300_000);
      expect((await limiter.consume('k')).allowed).toBe(true);
    },
  },
];
