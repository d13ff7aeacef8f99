/**
 * How long Redis keeps a limiter's key: until its state no longer counts (a window's end, or the end of
 * the window after it for a sliding window), and no longer than that was when the window began. A key
 * that expired early would forget what a client used; one kept on would hold memory for nothing. The
 * clock is injected, so the state's times are known; Redis counts the expiry by its own clock, which
 * moves a few ms while a step runs.
 */
import { createLimiter, type Limiter, type Policy, RedisStore } from '@tollgate/core';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { connectRedis, uniquePrefix } from '../harness/clients.js';

const redis: Redis = await connectRedis();
afterAll(() => redis.disconnect());

/** More than the Redis clock moves during one step of these tests, in ms. */
const STEP_MS = 1_000;

/** A minute-aligned time, as sliding windows align theirs. */
const START = 1_767_225_600_000;

const OWNERS = ['a', 'b', 'c', 'd', 'e', 'f'];

/**
 * A limiter on its own prefix with the clock at `at.nowMs`, and the expiry (ms from now) of each owner's
 * key; `consume` checks every owner, one at a time (single-check scripts) or all at once (a batch script).
 */
function setUp(policies: Policy | Policy[], together: boolean) {
  const at = { nowMs: START };
  const prefix = uniquePrefix('expiry');
  const limiter: Limiter = createLimiter({
    store: new RedisStore({ client: redis, prefix, clock: () => at.nowMs }),
    policies,
  });
  const consume = async () => {
    const decisions = [];
    if (together) decisions.push(...(await Promise.all(OWNERS.map((owner) => limiter.consume(owner)))));
    else for (const owner of OWNERS) decisions.push(await limiter.consume(owner));
    expect(decisions.every((d) => d.allowed)).toBe(true);
  };
  const expiries = async () => {
    const keys = await Promise.all(
      OWNERS.map(async (owner) => (await redis.keys(`${prefix}*{*${owner}}*`))[0]),
    );
    return Promise.all(keys.map((key) => redis.pttl(key as string)));
  };
  /** Expects every key to expire within (`least` − a step, `most`] ms from now. */
  const expectExpiries = async (least: number, most: number) => {
    for (const ms of await expiries()) {
      expect(ms).toBeGreaterThan(least - STEP_MS);
      expect(ms).toBeLessThanOrEqual(most);
    }
  };
  return { at, consume, expectExpiries };
}

describe.each([
  ['one at a time', false],
  ['all at once', true],
])('checks %s', (_name, together) => {
  it("a fixed window's key lives until the window ends, and no longer than it did when it began", async () => {
    const { at, consume, expectExpiries } = setUp(
      { limit: 10, window: '1m', algorithm: 'fixed-window' },
      together,
    );
    await consume();
    await expectExpiries(60_000, 60_000);
    at.nowMs += 20_000;
    await consume();
    await expectExpiries(40_000, 60_000);
    at.nowMs += 41_000; // a new window
    await consume();
    await expectExpiries(60_000, 60_000);
  });

  it("a sliding window's key lives until its counts no longer weigh, and no longer than that was when its window began", async () => {
    const { at, consume, expectExpiries } = setUp(
      { limit: 10, window: '1m', algorithm: 'sliding-window' },
      together,
    );
    at.nowMs = START + 30_000;
    await consume(); // the current window counts one: it weighs until the end of the next
    await expectExpiries(90_000, 90_000);
    at.nowMs = START + 70_000; // the next window: the one before weighs until this one ends
    await consume();
    await expectExpiries(110_000, 110_000);
    at.nowMs = START + 80_000;
    await consume();
    await expectExpiries(100_000, 110_000);
  });
  it('the key of a fixed and a sliding window lives until neither counts, and no longer than it did when both windows began', async () => {
    const { at, consume, expectExpiries } = setUp(
      [
        { limit: 10, window: '1m', algorithm: 'fixed-window', name: 'fixed' },
        { limit: 10, window: '1m', algorithm: 'sliding-window', name: 'sliding' },
      ],
      together,
    );
    at.nowMs = START + 30_000;
    await consume(); // the fixed window ends at 90 s, the sliding one weighs until 120 s
    await expectExpiries(90_000, 90_000);
    at.nowMs = START + 70_000; // the sliding window's next: it weighs until 180 s
    await consume();
    await expectExpiries(110_000, 110_000);
    at.nowMs = START + 80_000; // both windows go on
    await consume();
    await expectExpiries(100_000, 110_000);
    at.nowMs = START + 95_000; // a new fixed window, until 155 s; the sliding one still weighs until 180 s
    await consume();
    await expectExpiries(85_000, 85_000);
  });
});

describe("on the server's clock", () => {
  it("a fixed window's key keeps the expiry its window began with", async () => {
    const prefix = uniquePrefix('expiry-server-clock');
    const limiter = createLimiter({
      store: new RedisStore({ client: redis, prefix }),
      policies: { limit: 10, window: '1m', algorithm: 'fixed-window' },
    });
    await limiter.consume('a');
    const [key] = await redis.keys(`${prefix}*`);
    const first = await redis.pexpiretime(key as string);
    for (let i = 0; i < 3; i++) await limiter.consume('a');
    expect(await redis.pexpiretime(key as string)).toBe(first);
  });
});
