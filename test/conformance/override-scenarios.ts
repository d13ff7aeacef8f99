/**
 * The conformance table for overrides that begin and end: the client keeps what it has used, not what it
 * had left, on every algorithm and store, whether the override ends by its ttl or by `removeOverride`.
 */
import type { Limiter } from '@tollgate/core';
import { expect } from 'vitest';
import type { Scenario } from './scenarios.js';

/** How many of `times` consumes in a row are admitted. */
async function admitted(limiter: Limiter, times: number): Promise<number> {
  let count = 0;
  for (let i = 0; i < times; i++) if ((await limiter.consume('k')).allowed) count++;
  return count;
}

/**
 * A token bucket's key, consumed from under a larger override 100 ms before it ends, is kept until what
 * was used is refilled at the policy's own rate, not only the override's.
 */
function keptUntilOwnRefill(variant: string, ban?: Scenario['ban']): Scenario {
  return {
    name: `override: a key is kept until what was used of a larger burst is refilled at the own rate after it ends${variant}`,
    policies: { limit: 10, window: '1s' },
    overrides: true,
    ...(ban === undefined ? {} : { ban }),
    async run(limiter, fixture) {
      const { clock } = fixture;
      await limiter.setOverride('k', 20, { ttl: 1_000 });
      clock.advance(900);
      const used = await limiter.consume('k', { cost: 5 });
      expect(used.decidedBy).toMatchObject({ limit: 20, remaining: 15 });
      const ttls = (await fixture.storedTtls?.()) ?? [400];
      expect(Math.min(...ttls)).toBeGreaterThan(300); // kept 400 ms, until its own bucket is full again
      // Over at 1 000 ms with 17 of 20: 3 used is 7 left of 10, and 2 more refilled by 1 200 ms. A key
      // kept only as long as 17 of 20 takes to refill (150 ms) would be forgotten by then: 10 left.
      clock.advance(300);
      expect((await limiter.peek('k')).decidedBy).toMatchObject({ limit: 10, remaining: 9 });
    },
  };
}

export const overrideScenarios: Scenario[] = [
  {
    name: 'override: a token bucket cut to 3 for 2 s goes on at 97 of 100 once the override has ended',
    policies: { limit: 100, window: '1m' },
    overrides: true,
    async run(limiter, { clock }) {
      await limiter.setOverride('k', 3, { ttl: 2_000 });
      expect(await admitted(limiter, 4)).toBe(3);
      clock.advance(2_000); // over: 3 used of 3 (and 0.1 refilled at its rate) is 97.1 left of 100
      const after = await limiter.consume('k');
      expect(after).toMatchObject({ allowed: true });
      expect(after.decidedBy).toMatchObject({ limit: 100, remaining: 96 });
      expect(await admitted(limiter, 5)).toBe(5);
    },
  },
  keptUntilOwnRefill(''),
  keptUntilOwnRefill(', with a ban (the settle script)', { after: 5, duration: '1m' }),
  {
    name: 'override: removeOverride gives the client its own limit again, less what it used',
    policies: { limit: 100, window: '1m' },
    overrides: true,
    async run(limiter) {
      await limiter.setOverride('k', 3);
      expect(await admitted(limiter, 3)).toBe(3);
      await limiter.removeOverride('k'); // in the same millisecond as the last check
      const after = await limiter.consume('k');
      expect(after).toMatchObject({ allowed: true });
      expect(after.decidedBy).toMatchObject({ limit: 100, remaining: 96 });
    },
  },
  {
    name: 'override: one that begins keeps what the client used under its own limit',
    policies: { limit: 100, window: '1m' },
    overrides: true,
    async run(limiter) {
      expect(await admitted(limiter, 10)).toBe(10);
      await limiter.setOverride('k', 20); // 10 used: 10 left of 20, not 20
      const next = await limiter.consume('k');
      expect(next.decidedBy).toMatchObject({ limit: 20, remaining: 9 });
      await limiter.setOverride('k', 50); // one override for another: 11 used, 39 left
      expect((await limiter.consume('k')).decidedBy).toMatchObject({ limit: 50, remaining: 38 });
    },
  },
  {
    name: 'override: a client that used more than a lower override holds waits at its rate, and owes no more',
    policies: { limit: 100, window: '1m' },
    overrides: true,
    async run(limiter, { clock }) {
      expect(await admitted(limiter, 50)).toBe(50);
      await limiter.setOverride('k', 10, { ttl: '1h' }); // 50 used of 10: nothing left
      const refused = await limiter.consume('k');
      expect(refused).toMatchObject({ allowed: false, retryAfterMs: 6_000 }); // one token at 10 a minute
      clock.advance(6_000);
      expect(await admitted(limiter, 2)).toBe(1);
    },
  },
  {
    name: 'override: a fixed window keeps its count through an override and after it',
    policies: { limit: 10, window: '1m', algorithm: 'fixed-window' },
    overrides: true,
    async run(limiter, { clock }) {
      await limiter.setOverride('k', 3, { ttl: 2_000 });
      expect(await admitted(limiter, 4)).toBe(3);
      clock.advance(2_000);
      expect(await admitted(limiter, 10)).toBe(7);
    },
  },
];
