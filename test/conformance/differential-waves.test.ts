/**
 * MemoryStore and RedisStore, side by side under one clock, through random waves of checks started
 * together: RedisStore decides a wave in one script call (the batch scripts, the hot-key scripts or the
 * settle script's held path, as the wave's keys and the limiter's rules choose), MemoryStore one check
 * after another in the order they were started. Every answer, and what each key then holds, must be the
 * same, with and without a ban, exponential backoff or overrides set between waves.
 */
import {
  createLimiter,
  type Decision,
  type Limiter,
  type LimiterOptions,
  type LimitOverride,
  MemoryStore,
  type Policy,
  RedisStore,
} from '@tollgate/core';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { connectRedis, uniquePrefix } from '../harness/clients.js';
import { seeded } from '../harness/seeded.js';
import { comparable, POLICY_SETS, SharedClock } from './differential-fixtures.js';

const redis: Redis = await connectRedis();
afterAll(() => redis.disconnect());

const KEYS = ['a', 'b', 'c', 'd'];

/** The policy sets the waves run: one of each algorithm, a pair, and three policies. */
const WAVE_SETS = [
  'token bucket',
  'fixed window',
  'sliding window',
  'a token bucket and a fixed window',
  'three policies',
].map((name) => [name, POLICY_SETS[name] as Policy | Policy[]] as const);

type Rules = Pick<LimiterOptions, 'ban' | 'exponentialBackoff' | 'overrides'>;

const RULES: Record<string, Rules> = {
  'no rule': {},
  'a ban': { ban: { after: 2, duration: '3s' } },
  'exponential backoff': { exponentialBackoff: true },
  overrides: { overrides: true },
};

/**
 * `alike`: every wave is consumes of one cost, as a batch script takes them (the first of a wave is
 * written at once, alone; the others wait for it and go together): on distinct keys, or all on one key.
 */
async function run(
  seed: number,
  policies: Policy | Policy[],
  rules: Rules,
  alike: 'distinct keys' | 'one key' | false = false,
): Promise<number> {
  const random = seeded(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const clock = new SharedClock();
  const options = { policies, denyCache: false, onStoreError: 'throw', ...rules } as const;
  const memory = createLimiter({ ...options, store: new MemoryStore({ clock: clock.now }) });
  const onRedis = createLimiter({
    ...options,
    store: new RedisStore({ client: redis, prefix: uniquePrefix('differential-waves'), clock: clock.now }),
  });
  const limits = Array.isArray(policies) ? policies : [policies];
  let compared = 0;
  for (let wave = 0; wave < 100; wave++) {
    const roll = random();
    clock.step(roll < 0.3 ? 0 : roll < 0.7 ? Math.floor(random() * 150) : Math.floor(random() * 2_500));
    if (rules.overrides && random() < 0.1) {
      const first = 1 + Math.floor(random() * 20);
      const override: LimitOverride =
        limits.length === 1
          ? first
          : Object.fromEntries(
              limits.map((policy, i) => [policy.name as string, i === 0 ? first : policy.limit]),
            );
      const ttl = { ttl: 200 + Math.floor(random() * 3_000) };
      const key = pick(KEYS);
      await memory.setOverride(key, override, ttl);
      await onRedis.setOverride(key, override, ttl);
    }
    const checks: ((limiter: Limiter) => Promise<Decision>)[] = [];
    if (alike === 'one key') {
      const cost = 1 + Math.floor(random() * 2);
      for (let size = 3 + Math.floor(random() * 8); checks.length < size; ) {
        checks.push((l) => l.consume('a', { cost }));
      }
    } else if (alike) {
      const cost = 1 + Math.floor(random() * 2);
      const first = pick(KEYS);
      const others = KEYS.filter((key) => key !== first).sort(() => random() - 0.5);
      for (const key of [first, ...others.slice(0, 2 + Math.floor(random() * 2))]) {
        checks.push((l) => l.consume(key, { cost }));
      }
    } else {
      // Half the waves on one hot key, the others across all four; a fifth of the checks peek.
      const hot = random() < 0.5;
      for (let size = 1 + Math.floor(random() * 10); checks.length < size; ) {
        const key = hot ? 'a' : pick(KEYS);
        const cost = 1 + Math.floor(random() * 3);
        checks.push(random() < 0.8 ? (l) => l.consume(key, { cost }) : (l) => l.peek(key, { cost }));
      }
    }
    const what = `seed ${seed}, wave ${wave}`;
    const together = await Promise.all(checks.map((check) => check(onRedis)));
    const oneByOne: Decision[] = [];
    for (const check of checks) oneByOne.push(await check(memory));
    expect(together.map(comparable), what).toEqual(oneByOne.map(comparable));
    for (const key of KEYS) {
      expect(comparable(await onRedis.peek(key)), `${what}: ${key} holds`).toEqual(
        comparable(await memory.peek(key)),
      );
      compared++;
    }
  }
  return compared;
}

describe.each(WAVE_SETS)('in waves, MemoryStore and RedisStore decide alike: %s', (_name, policies) => {
  it.each(Object.entries(RULES))('with %s', async (rule, rules) => {
    const seed = Object.keys(RULES).indexOf(rule) + 1;
    expect(await run(seed, policies, rules)).toBe(400);
  });
});

describe.each(WAVE_SETS)(
  'in waves alike but for their keys, MemoryStore and RedisStore decide alike: %s',
  (_name, policies) => {
    it.each(Object.entries(RULES))('with %s', async (rule, rules) => {
      const seed = 100 + Object.keys(RULES).indexOf(rule);
      expect(await run(seed, policies, rules, 'distinct keys')).toBe(400);
    });
  },
);

describe.each(WAVE_SETS)(
  'in waves alike, all on one key, MemoryStore and RedisStore decide alike: %s',
  (_name, policies) => {
    it.each(Object.entries(RULES))('with %s', async (rule, rules) => {
      const seed = 200 + Object.keys(RULES).indexOf(rule);
      expect(await run(seed, policies, rules, 'one key')).toBe(400);
    });
  },
);
