/**
 * MemoryStore and RedisStore, side by side under one clock, through random sequences of what a client
 * and an app can do: consume (some of them given a maxWait), peek, reserve and settle or cancel (often
 * after a window has turned; half of them by id, some settled twice or after their ttl, at most 3 open
 * per key), refunds of past charges, penalties, overrides set, ended by their ttl or removed; for one
 * policy, also with a ban or exponential backoff. Every answer of the two limiters, and what each key
 * then holds, must be the same.
 */
import { createLimiter, type Limiter, MemoryStore, type Policy, RedisStore } from '@tollgate/core';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { connectRedis, uniquePrefix } from '../harness/clients.js';
import { seeded } from '../harness/seeded.js';
import { comparable, POLICY_SETS, SharedClock } from './differential-fixtures.js';

const redis: Redis = await connectRedis();
afterAll(() => redis.disconnect());

const KEYS = ['a', 'b', 'c'];

interface Pair {
  readonly memory: Limiter;
  readonly redis: Limiter;
  readonly clock: SharedClock;
}

/** Runs `operation` on both limiters and checks they answer alike (a rejection included). */
async function both<T>(
  pair: Pair,
  what: string,
  operation: (limiter: Limiter) => Promise<T>,
): Promise<[T, T]> {
  pair.clock.step(0);
  const settled = await Promise.allSettled([operation(pair.memory), operation(pair.redis)]);
  const [memory, redis] = settled;
  expect(redis.status, what).toBe(memory.status);
  if (memory.status === 'rejected' || redis.status === 'rejected') {
    expect(String((redis as PromiseRejectedResult).reason), what).toBe(
      String((memory as PromiseRejectedResult).reason),
    );
    return [undefined as T, undefined as T];
  }
  return [memory.value, redis.value];
}

/** A ban that the operations above reach now and then, and that ends within a run. */
const BAN = { ban: { after: 2, duration: '3s' } } as const;
const BACKOFF = { exponentialBackoff: true } as const;

async function run(
  seed: number,
  policies: Policy | Policy[],
  overrides: boolean,
  rules: typeof BAN | typeof BACKOFF | Record<string, never> = {},
): Promise<number> {
  const random = seeded(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const clock = new SharedClock();
  // A waiter's turn is in its decision (waitedMs); the sleep until it is not what is compared here.
  const sleep = async () => {};
  const options = {
    policies,
    overrides,
    denyCache: false,
    onStoreError: 'throw',
    sleep,
    maxOpen: 3,
    ...rules,
  } as const;
  // Reservations by id draw from a generator of their own, so the other operations stay as they were.
  const byId = seeded(seed + 1_000);
  const pair: Pair = {
    clock,
    memory: createLimiter({ ...options, store: new MemoryStore({ clock: clock.now }) }),
    redis: createLimiter({
      ...options,
      store: new RedisStore({ client: redis, prefix: uniquePrefix('differential'), clock: clock.now }),
    }),
  };
  const open: {
    key: string;
    id: string | undefined;
    memory: { settle(n: number): Promise<void>; cancel(): Promise<void> };
    redis: { settle(n: number): Promise<void>; cancel(): Promise<void> };
  }[] = [];
  const charges: { key: string; cost: number; atMs: number }[] = [];
  const limits = Array.isArray(policies) ? policies : [policies];
  let compared = 0;
  for (let step = 0; step < 300; step++) {
    const roll = random();
    clock.step(roll < 0.3 ? 0 : roll < 0.7 ? Math.floor(random() * 120) : Math.floor(random() * 2_500));
    const key = pick(KEYS);
    const cost = 1 + Math.floor(random() * 4);
    const what = `seed ${seed}, step ${step}`;
    const op = random();
    if (op < 0.35) {
      // A quarter of the consumes may wait (token buckets only: others reject it alike).
      const maxWait = random() < 0.25 ? Math.floor(random() * 1_500) : undefined;
      const consumed = (l: Limiter) => l.consume(key, maxWait === undefined ? { cost } : { cost, maxWait });
      const [m, r] = await both(pair, `${what}: consume (maxWait ${maxWait})`, consumed);
      // undefined: both rejected it alike (a window cannot be waited on).
      if (m !== undefined) {
        expect(comparable(r), `${what}: consume (maxWait ${maxWait})`).toEqual(comparable(m));
        if (m.allowed) charges.push({ key, cost, atMs: m.decidedAtMs });
      }
    } else if (op < 0.5) {
      const id = byId() < 0.5 ? `r${step}` : undefined;
      const options = id === undefined ? undefined : { id, ttl: 1_000 + Math.floor(byId() * 30_000) };
      const [m, r] = await both(pair, `${what}: reserve ${id}`, (l) => l.reserve(key, cost * 2, options));
      expect(comparable(r.decision), `${what}: reserve ${id}`).toEqual(comparable(m.decision));
      open.push({ key, id, memory: m, redis: r });
    } else if (op < 0.65 && open.length > 0) {
      const index = Math.floor(random() * open.length);
      const [reservation] = open.splice(index, 1);
      const actual = random() < 0.3 ? -1 : Math.floor(random() * 6);
      const id = reservation?.id;
      if (id !== undefined) {
        // By id, as another process would: once or twice, each answer alike.
        for (let times = byId() < 0.3 ? 2 : 1; times > 0; times--) {
          const [m, r] = await both(pair, `${what}: settle ${id} (${actual})`, (l) =>
            actual < 0
              ? l.cancel(reservation?.key as string, id)
              : l.settle(reservation?.key as string, id, actual),
          );
          expect(r, `${what}: settle ${id}`).toEqual(m);
        }
      } else {
        const settle = (side: 'memory' | 'redis') =>
          actual < 0 ? reservation?.[side].cancel() : reservation?.[side].settle(actual);
        clock.step(0);
        await Promise.all([settle('memory'), settle('redis')]);
      }
    } else if (op < 0.72 && charges.length > 0) {
      const charge = pick(charges);
      await both(pair, `${what}: refund`, (l) =>
        l.refund(charge.key, charge.cost, { chargedAtMs: charge.atMs }),
      );
    } else if (op < 0.77) {
      const [m, r] = await both(pair, `${what}: penalty`, (l) => l.penalty(key, cost));
      expect(comparable(r), `${what}: penalty`).toEqual(comparable(m));
    } else if (op < 0.85 && overrides) {
      const override = Object.fromEntries(
        limits.map((policy, i) => [
          policy.name ?? `${policy.limit}-per-${policy.window}`,
          i === 0 || random() < 0.5 ? 1 + Math.floor(random() * 20) : policy.limit,
        ]),
      );
      const ttl = random() < 0.6 ? { ttl: 200 + Math.floor(random() * 3_000) } : undefined;
      const given = limits.length === 1 ? (Object.values(override)[0] as number) : override;
      await both(pair, `${what}: setOverride`, (l) => l.setOverride(key, given, ttl));
    } else if (op < 0.9 && overrides) {
      await both(pair, `${what}: removeOverride`, (l) => l.removeOverride(key));
    } else {
      const [m, r] = await both(pair, `${what}: peek`, (l) => l.peek(key, { cost }));
      expect(comparable(r), `${what}: peek`).toEqual(comparable(m));
    }
    // What every key holds now, as a request of cost 1 would see it.
    for (const each of KEYS) {
      const [m, r] = await both(pair, `${what}: peek ${each}`, (l) => l.peek(each));
      expect(comparable(r), `${what}: ${each} holds`).toEqual(comparable(m));
      compared++;
    }
  }
  return compared;
}

describe.each(Object.entries(POLICY_SETS))(
  'MemoryStore and RedisStore decide alike: %s',
  (_name, policies) => {
    it.each([1, 2, 3])('without overrides (seed %i)', async (seed) => {
      expect(await run(seed, policies, false)).toBe(900);
    });
    it.each([4, 5, 6])('with overrides set, ended and removed (seed %i)', async (seed) => {
      expect(await run(seed, policies, true)).toBe(900);
    });
  },
);

// A limiter that bans: its consumes of one policy go to the ban's own script, all else to the general one.
describe.each(Object.entries(POLICY_SETS).filter(([, policies]) => !Array.isArray(policies)))(
  'MemoryStore and RedisStore decide alike with a ban: %s',
  (_name, policies) => {
    it.each([7, 8])('without overrides (seed %i)', async (seed) => {
      expect(await run(seed, policies, false, BAN)).toBe(900);
    });
    it('with overrides set, ended and removed (seed 9)', async () => {
      expect(await run(9, policies, true, BAN)).toBe(900);
    });
  },
);

describe('MemoryStore and RedisStore decide alike with exponential backoff: token bucket', () => {
  const policies = POLICY_SETS['token bucket'] as Policy;
  it('without overrides (seed 10)', async () => {
    expect(await run(10, policies, false, BACKOFF)).toBe(900);
  });
  it.each([11, 314])('with overrides set, ended and removed (seed %i)', async (seed) => {
    expect(await run(seed, policies, true, BACKOFF)).toBe(900);
  });
});
