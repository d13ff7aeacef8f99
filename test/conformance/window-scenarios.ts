/**
 * The conformance table for the fixed and sliding windows, and for policies of different algorithms in
 * one limiter: every scenario runs unchanged on every store (memory, Redis, Redis Cluster, node-redis).
 */
import type { Limiter } from '@tollgate/core';
import { expect } from 'vitest';
import type { ManualClock } from '../harness/manual-clock.js';
import { seeded } from '../harness/seeded.js';
import type { Scenario } from './scenarios.js';

/** Consumes `times` in a row and returns how many were allowed. */
async function consumeTimes(limiter: Limiter, key: string, times: number, cost = 1): Promise<number> {
  let allowed = 0;
  for (let i = 0; i < times; i++) if ((await limiter.consume(key, { cost })).allowed) allowed++;
  return allowed;
}

/**
 * Random costs at random times: whenever a check is refused, waiting its `retryAfterMs` less one
 * millisecond is still refused, and waiting it all is admitted. The clock only moves forward.
 */
async function retryAfterIsExact(limiter: Limiter, clock: ManualClock, seed: number): Promise<void> {
  const random = seeded(seed);
  let checked = 0;
  for (let step = 0; step < 60; step++) {
    clock.advance(Math.floor(random() * 1_500));
    const cost = 1 + Math.floor(random() * 3);
    const decision = await limiter.consume('k', { cost });
    if (decision.allowed || decision.retryAfterMs === undefined) continue;
    const wait = decision.retryAfterMs;
    expect(wait).toBeGreaterThan(0);
    clock.advance(wait - 1);
    expect((await limiter.peek('k', { cost })).allowed, `step ${step}: 1 ms early`).toBe(false);
    clock.advance(1);
    expect((await limiter.consume('k', { cost })).allowed, `step ${step}: on time`).toBe(true);
    checked++;
  }
  expect(checked).toBeGreaterThan(5); // the sequence did hit its limit, often
}

export const windowScenarios: Scenario[] = [
  {
    name: 'fixed window: the limit in a window that starts at the first request, then a wait to its end',
    policies: { limit: 3, window: '10s', algorithm: 'fixed-window' },
    async run(limiter, { clock }) {
      clock.advance(2_345); // not on a boundary of the clock: the window is the client's own
      for (const remaining of [2, 1, 0]) {
        expect((await limiter.consume('k')).decidedBy).toMatchObject({ remaining, nextTokenMs: 10_000 });
      }
      const denied = await limiter.consume('k');
      expect(denied).toMatchObject({ allowed: false, reason: 'limited', retryAfterMs: 10_000 });
      expect(denied.decidedBy).toMatchObject({
        algorithm: 'fixed-window',
        resetMs: 10_000,
        nextTokenMs: 10_000,
      });
      clock.advance(9_999);
      expect(await limiter.consume('k')).toMatchObject({ allowed: false, retryAfterMs: 1 });
      clock.advance(1);
      expect((await limiter.consume('k')).decidedBy.remaining).toBe(2); // a new window, from now
    },
  },
  {
    name: 'fixed window: limit 100 per minute admits 100 in the first minute, where a token bucket admits 150',
    policies: [
      { limit: 100, window: '1m', algorithm: 'fixed-window', name: 'fixed' },
      { limit: 1_000_000, window: '1m', name: 'roomy' },
    ],
    async run(limiter, { clock }) {
      expect(await consumeTimes(limiter, 'k', 100)).toBe(100);
      clock.advance(30_000);
      expect(await consumeTimes(limiter, 'k', 50)).toBe(0);
      clock.advance(30_000);
      expect(await consumeTimes(limiter, 'k', 101)).toBe(100);
    },
  },
  {
    name: 'fixed window: costs count, a cost above the limit never fits, refunds give back, the key expires',
    policies: { limit: 5, window: '1m', algorithm: 'fixed-window' },
    async run(limiter, fixture) {
      expect((await limiter.consume('k', { cost: 3 })).decidedBy.remaining).toBe(2);
      expect(await limiter.consume('k', { cost: 3 })).toMatchObject({ allowed: false, retryAfterMs: 60_000 });
      expect(await limiter.consume('k', { cost: 6 })).toMatchObject({ reason: 'cost-exceeds-capacity' });
      await limiter.refund('k', 2);
      expect((await limiter.consume('k', { cost: 4 })).decidedBy.remaining).toBe(0);
      const [ttl] = (await fixture.storedTtls?.()) ?? [60_000];
      expect(ttl).toBeGreaterThan(59_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
      await limiter.refund('k', 5);
      expect(await fixture.storedKeys()).toBe(0); // nothing counted: nothing kept
    },
  },
  {
    name: 'fixed window: a clock that steps back keeps the window it is in',
    policies: { limit: 2, window: '10s', algorithm: 'fixed-window' },
    async run(limiter, { clock }) {
      expect(await consumeTimes(limiter, 'k', 2)).toBe(2);
      clock.advance(-20_000);
      expect((await limiter.consume('k')).allowed).toBe(false);
    },
  },
  {
    name: 'fixed window: Retry-After is exact through random costs and times',
    policies: { limit: 5, window: '4s', algorithm: 'fixed-window' },
    run: (limiter, { clock }) => retryAfterIsExact(limiter, clock, 7),
  },
  {
    name: 'sliding window: the previous window counts by how much of it the sliding window still covers',
    policies: { limit: 10, window: '10s', algorithm: 'sliding-window' },
    async run(limiter, { clock }) {
      clock.advance(5_000); // the windows are aligned to the clock: halfway through one
      expect(await consumeTimes(limiter, 'k', 11)).toBe(10);
      // 5 s into the next window, half of the previous one's 10 still counts: 5 fit.
      clock.advance(10_000);
      expect(await consumeTimes(limiter, 'k', 6)).toBe(5);
      const denied = await limiter.consume('k');
      // The estimate is 10 × (5/10) + 5 = 10; it falls by one token a second.
      expect(denied).toMatchObject({ allowed: false, retryAfterMs: 1_000 });
      expect(denied.decidedBy).toMatchObject({
        algorithm: 'sliding-window',
        remaining: 0,
        nextTokenMs: 1_000,
      });
    },
  },
  {
    name: 'sliding window: a full window waits for the next one, then for the weight to fall',
    policies: { limit: 10, window: '10s', algorithm: 'sliding-window' },
    async run(limiter, { clock }) {
      expect(await consumeTimes(limiter, 'k', 10)).toBe(10);
      // Next window: 10 × (10 − e)/10 + 1 ≤ 10 once e ≥ 1 s.
      expect(await limiter.consume('k')).toMatchObject({ allowed: false, retryAfterMs: 11_000 });
      clock.advance(10_999);
      expect((await limiter.consume('k')).allowed).toBe(false);
      clock.advance(1);
      expect((await limiter.consume('k')).allowed).toBe(true);
    },
  },
  {
    name: 'sliding window: forgotten after two quiet windows; a cost above the limit never fits',
    policies: { limit: 4, window: '1m', algorithm: 'sliding-window' },
    async run(limiter, fixture) {
      await limiter.consume('k', { cost: 2 });
      const [ttl] = (await fixture.storedTtls?.()) ?? [120_000];
      expect(ttl).toBeGreaterThan(60_000);
      expect(ttl).toBeLessThanOrEqual(120_000); // until the current window has left the sliding one
      expect(await limiter.consume('k', { cost: 5 })).toMatchObject({ reason: 'cost-exceeds-capacity' });
      fixture.clock.advance(120_000);
      expect((await limiter.consume('k', { cost: 4 })).allowed).toBe(true);
      await limiter.reset('k');
      expect(await fixture.storedKeys()).toBe(0);
    },
  },
  {
    name: 'sliding window: Retry-After is exact through random costs and times',
    policies: { limit: 6, window: '5s', algorithm: 'sliding-window' },
    run: (limiter, { clock }) => retryAfterIsExact(limiter, clock, 11),
  },
  {
    name: 'token bucket: Retry-After is exact through random costs and times',
    policies: { limit: 4, window: '3s', burst: 6 },
    run: (limiter, { clock }) => retryAfterIsExact(limiter, clock, 13),
  },
  {
    name: 'policies of different algorithms are charged all or none, in one step',
    policies: [
      { limit: 5, window: '1s', name: 'bucket' },
      { limit: 8, window: '1h', name: 'window', algorithm: 'fixed-window' },
      { limit: 7, window: '1h', name: 'sliding', algorithm: 'sliding-window' },
    ],
    async run(limiter, { clock }) {
      expect(await consumeTimes(limiter, 'k', 6)).toBe(5);
      const denied = await limiter.consume('k');
      expect(denied.decidedBy.policy).toBe('bucket');
      expect(denied.policies.map((p) => p.remaining)).toEqual([0, 3, 2]); // the windows were not charged
      clock.advance(1_000);
      expect(await consumeTimes(limiter, 'k', 3)).toBe(2); // the sliding window's 7 decide now
      const bySliding = await limiter.consume('k');
      expect(bySliding.decidedBy.policy).toBe('sliding');
      expect(bySliding.policies.map((p) => p.remaining)).toEqual([3, 1, 0]); // bucket and window untouched
    },
  },
];
