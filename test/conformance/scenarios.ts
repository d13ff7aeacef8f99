/**
 * The store conformance table: every scenario runs unchanged against every store (memory, Redis,
 * Redis Cluster) under an injected clock, so the stores cannot drift apart.
 */
import { type BanOptions, createLimiter, type Limiter, type Policy } from '@tollgate/core';
import { expect } from 'vitest';
import type { StoreFixture } from './store-fixtures.js';

export interface Scenario {
  readonly name: string;
  readonly policies: Policy | Policy[];
  /** The limiter's ban, if the scenario needs one. */
  readonly ban?: BanOptions;
  /** The limiter's penalties, if the scenario needs them. */
  readonly penalties?: { readonly exponentialBackoff?: boolean; readonly continueExceeding?: boolean };
  /** Whether the limiter reads overrides. */
  readonly overrides?: boolean;
  run(limiter: Limiter, fixture: StoreFixture): Promise<void>;
}

/** Consumes `times` in a row and returns how many were allowed. */
async function consumeTimes(limiter: Limiter, key: string, times: number, cost = 1): Promise<number> {
  let allowed = 0;
  for (let i = 0; i < times; i++) if ((await limiter.consume(key, { cost })).allowed) allowed++;
  return allowed;
}

export const scenarios: Scenario[] = [
  {
    name: 'spends the bucket one token at a time, then denies with the exact wait',
    policies: { limit: 10, window: '1s' },
    async run(limiter) {
      for (let expected = 9; expected >= 0; expected--) {
        const decision = await limiter.consume('k');
        expect(decision).toMatchObject({ allowed: true, reason: 'allowed', retryAfterMs: 0 });
        expect(decision.decidedBy.remaining).toBe(expected);
      }
      const denied = await limiter.consume('k');
      expect(denied).toMatchObject({ allowed: false, reason: 'limited', retryAfterMs: 100 });
      expect(denied.decidedBy).toMatchObject({ policy: '10-per-1s', remaining: 0, resetMs: 1000 });
    },
  },
  {
    name: 'refills continuously, not a millisecond early',
    policies: { limit: 3, window: 1000 },
    async run(limiter, { clock }) {
      expect(await consumeTimes(limiter, 'k', 3)).toBe(3);
      clock.advance(333); // 333 ms × 3 tokens/s = 0.999 tokens: not yet one
      expect(await limiter.consume('k')).toMatchObject({ allowed: false, retryAfterMs: 1 });
      clock.advance(1);
      expect(await limiter.consume('k')).toMatchObject({ allowed: true });
      expect(await limiter.consume('k')).toMatchObject({ allowed: false, retryAfterMs: 333 });
    },
  },
  {
    name: 'refill never exceeds capacity after a long quiet spell',
    policies: { limit: 5, window: '1s' },
    async run(limiter, { clock }) {
      expect(await consumeTimes(limiter, 'k', 5)).toBe(5);
      clock.advance(60_000);
      expect(await consumeTimes(limiter, 'k', 6)).toBe(5);
    },
  },
  {
    name: 'burst sets capacity apart from the refill rate',
    policies: { limit: 1, window: '1s', burst: 5 },
    async run(limiter, { clock }) {
      const first = await limiter.consume('k');
      expect(first.decidedBy).toMatchObject({ capacity: 5, remaining: 4, resetMs: 1000 });
      expect(await consumeTimes(limiter, 'k', 5)).toBe(4);
      const denied = await limiter.consume('k');
      expect(denied).toMatchObject({ allowed: false, retryAfterMs: 1000 });
      expect(denied.decidedBy.resetMs).toBe(5000);
      clock.advance(2000);
      expect(await consumeTimes(limiter, 'k', 3)).toBe(2);
    },
  },
  {
    name: 'cost charges several tokens and waits for all of them',
    policies: { limit: 10, window: '1s' },
    async run(limiter) {
      expect((await limiter.consume('k', { cost: 4 })).decidedBy.remaining).toBe(6);
      expect((await limiter.consume('k', { cost: 4 })).decidedBy.remaining).toBe(2);
      expect(await limiter.consume('k', { cost: 4 })).toMatchObject({ allowed: false, retryAfterMs: 200 });
      expect((await limiter.consume('k', { cost: 2 })).decidedBy.remaining).toBe(0);
    },
  },
  {
    name: 'fractional cost is exact and remaining is floored',
    policies: { limit: 2, window: '1s' },
    async run(limiter) {
      expect((await limiter.consume('k', { cost: 0.5 })).decidedBy.remaining).toBe(1);
      expect(await consumeTimes(limiter, 'k', 4, 0.5)).toBe(3);
    },
  },
  {
    name: 'cost beyond capacity is denied with its own reason and charges nothing',
    policies: [
      { limit: 100, window: '1m', name: 'minute' },
      { limit: 5, window: '1s', name: 'second' },
    ],
    async run(limiter) {
      const denied = await limiter.consume('k', { cost: 6 });
      expect(denied).toMatchObject({
        allowed: false,
        reason: 'cost-exceeds-capacity',
        retryAfterMs: undefined,
      });
      expect(denied.decidedBy.policy).toBe('second');
      const after = await limiter.peek('k');
      expect(after.policies.map((p) => p.remaining)).toEqual([100, 5]);
    },
  },
  {
    name: 'several policies are charged all or none',
    policies: [
      { limit: 5, window: '1s', name: 'burst' },
      { limit: 8, window: '1h', name: 'hourly' },
    ],
    async run(limiter, { clock }) {
      expect(await consumeTimes(limiter, 'k', 5)).toBe(5);
      const byBurst = await limiter.consume('k');
      expect(byBurst).toMatchObject({ allowed: false, retryAfterMs: 200 });
      expect(byBurst.decidedBy.policy).toBe('burst');
      expect(byBurst.policies.map((p) => p.remaining)).toEqual([0, 3]); // hourly was not charged
      clock.advance(1000);
      expect(await consumeTimes(limiter, 'k', 3)).toBe(3);
      const byHourly = await limiter.consume('k');
      expect(byHourly.decidedBy.policy).toBe('hourly');
      expect(byHourly.retryAfterMs).toBe(450_000 - 1000); // 1 h / 8 per token, 1 s of it already refilled
      expect(byHourly.policies.map((p) => p.remaining)).toEqual([2, 0]); // burst was not charged
    },
  },
  {
    name: 'an allowed decision names the policy with the fewest tokens left',
    policies: [
      { limit: 100, window: '1m', name: 'minute' },
      { limit: 3, window: '1s', name: 'second' },
    ],
    async run(limiter) {
      const decision = await limiter.consume('k');
      expect(decision.decidedBy).toMatchObject({ policy: 'second', remaining: 2 });
    },
  },
  {
    name: 'peek answers without charging',
    policies: { limit: 2, window: '1m' },
    async run(limiter) {
      for (let i = 0; i < 3; i++) {
        expect(await limiter.peek('k')).toMatchObject({ allowed: true, decidedBy: { remaining: 2 } });
      }
      expect(await consumeTimes(limiter, 'k', 3)).toBe(2);
      expect(await limiter.peek('k')).toMatchObject({ allowed: false, retryAfterMs: 30_000 });
    },
  },
  {
    name: 'reset refills every policy at once',
    policies: [
      { limit: 2, window: '1s', name: 'a' },
      { limit: 3, window: '1h', name: 'b' },
    ],
    async run(limiter, fixture) {
      expect(await consumeTimes(limiter, 'k', 3)).toBe(2);
      await limiter.reset('k');
      expect(await fixture.storedKeys()).toBe(0);
      expect((await limiter.consume('k')).policies.map((p) => p.remaining)).toEqual([1, 2]);
    },
  },
  {
    name: 'refund gives tokens back, capped at capacity',
    policies: { limit: 10, window: '1m' },
    async run(limiter, fixture) {
      await limiter.consume('k', { cost: 3 });
      await limiter.refund('k', 2);
      expect((await limiter.peek('k')).decidedBy.remaining).toBe(9);
      await limiter.refund('k', 5);
      expect((await limiter.peek('k')).decidedBy).toMatchObject({ remaining: 10, resetMs: 0 });
      expect(await fixture.storedKeys()).toBe(0); // a full bucket is not kept
    },
  },
  {
    name: "a key's buckets live in one key that expires when the slowest is full again",
    policies: [
      { limit: 10, window: '1s', name: 'second' },
      { limit: 100, window: '1h', name: 'hour' },
    ],
    async run(limiter, fixture) {
      await limiter.consume('k', { cost: 2 });
      expect(await fixture.storedKeys()).toBe(1);
      const [ttl] = (await fixture.storedTtls?.()) ?? [72_000];
      expect(ttl).toBeGreaterThan(70_000);
      expect(ttl).toBeLessThanOrEqual(72_000); // 2 tokens at 100/h, not 2 tokens at 10/s
      await limiter.consume('other');
      expect(await fixture.storedKeys()).toBe(2);
    },
  },
  {
    name: 'a clock that steps back grants no refill twice',
    policies: { limit: 1, window: '1s', burst: 2 },
    async run(limiter, { clock }) {
      expect(await consumeTimes(limiter, 'k', 2)).toBe(2);
      clock.advance(1000);
      expect(await consumeTimes(limiter, 'k', 1)).toBe(1);
      clock.advance(-5000);
      expect(await limiter.consume('k')).toMatchObject({ allowed: false });
      clock.advance(5999); // back to 1 ms before the next token is due
      expect(await limiter.consume('k')).toMatchObject({ allowed: false, retryAfterMs: 1 });
    },
  },
  {
    name: 'namespace and key are joined so that no two pairs share a bucket',
    policies: { limit: 1, window: '1h' },
    async run(_limiter, { store }) {
      const policies = { limit: 1, window: '1h' } as const;
      const pairs: [string | undefined, string][] = [
        ['api', 'user:42'],
        ['api:user', '42'],
        [undefined, 'api/user:42'],
        [undefined, '/api'],
        ['api', '#x'],
        ['api', '%23x'],
      ];
      for (const [namespace, key] of pairs) {
        const limiter = createLimiter({ store, policies, ...(namespace ? { namespace } : {}) });
        expect((await limiter.consume(key)).allowed, `${namespace}+${key}`).toBe(true);
      }
    },
  },
  {
    name: 'identities with braces work, and one that spells a hash is not the hash of a long one',
    policies: { limit: 1, window: '1h' },
    async run(limiter) {
      for (const key of ['{', '}', '}x', '{}', 'a}b{c', '{tag}rest']) {
        expect(await consumeTimes(limiter, key, 2), key).toBe(1);
      }
      const long = 'x'.repeat(200);
      expect(await consumeTimes(limiter, long, 1)).toBe(1);
      const { createHash } = await import('node:crypto');
      const spelled = `#${createHash('sha256').update(long).digest('base64url')}`;
      expect(await consumeTimes(limiter, spelled, 1)).toBe(1); // its own bucket, not the long key's
    },
  },
  {
    name: 'keys never share buckets',
    policies: { limit: 1, window: '1h' },
    async run(limiter) {
      expect(await consumeTimes(limiter, 'alice', 2)).toBe(1);
      expect(await consumeTimes(limiter, 'bob', 2)).toBe(1);
      expect(await consumeTimes(limiter, 'x'.repeat(10_000), 2)).toBe(1); // long keys are hashed, not dropped
    },
  },
];

/**
 * Creates the scenario's limiter on the fixture's store. A store error fails the scenario: taken by the
 * insurance limiter, it would only show as a wrong count, and only sometimes.
 */
export function limiterFor(scenario: Scenario, fixture: StoreFixture): Limiter {
  const ban = scenario.ban ? { ban: scenario.ban } : {};
  const { store } = fixture;
  return createLimiter({
    store,
    policies: scenario.policies,
    onStoreError: 'throw',
    ...ban,
    ...scenario.penalties,
    ...(scenario.overrides ? { overrides: true } : {}),
  });
}
