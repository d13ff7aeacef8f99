/**
 * A fleet mid-deploy: servers of the previous release and of this one limit the same clients on one
 * Redis, each running its own scripts. The previous release's settle script (committed as it was,
 * `fixtures/`) and this release's scripts take turns on one key: each reads what the other wrote, and
 * together they admit exactly the limit.
 */
import { readFileSync } from 'node:fs';
import { createLimiter, RedisStore } from '@tollgate/core';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { connectRedis, uniquePrefix } from '../harness/clients.js';

const redis: Redis = await connectRedis();
afterAll(() => redis.disconnect());

const PREVIOUS_SETTLE = readFileSync(
  new URL('./fixtures/settle-script-before-single-checks.lua', import.meta.url),
  'utf8',
);

/** Each algorithm's code and state size, as the previous release's settle script reads a set. */
const CODES = { 'token-bucket': [1, 2], 'fixed-window': [2, 2], 'sliding-window': [3, 3] } as const;

describe.each(Object.keys(CODES) as (keyof typeof CODES)[])('%s during a rolling deploy', (algorithm) => {
  it("the previous release's script and this release's take turns on one key, and admit the limit", async () => {
    const nowMs = 1_767_225_600_000;
    const prefix = uniquePrefix('rolling');
    const store = new RedisStore({ client: redis, prefix, clock: () => nowMs });
    const limiter = createLimiter({ store, policies: { limit: 10, window: '1m', algorithm } });
    const [code, fields] = CODES[algorithm];
    const { limit, windowMs, capacityUnits } = limiter.policies[0] as (typeof limiter.policies)[number];
    /** A consume as the previous release sends it: one set, one shape, one check. */
    const previousConsume = async (key: string) => {
      const args = [
        1,
        1,
        code,
        fields,
        limit,
        windowMs,
        capacityUnits,
        0,
        0,
        0,
        1,
        1,
        nowMs,
        '',
        1,
        'consume',
      ];
      const answer = (await redis.eval(PREVIOUS_SETTLE, 1, key, ...args.map(String))) as number[];
      return answer[1] === 1;
    };

    expect((await limiter.consume('client')).allowed).toBe(true); // this release's single-check script
    const [key] = await redis.keys(`${prefix}*`);
    expect(key).toBeDefined();
    for (let i = 0; i < 3; i++) expect(await previousConsume(key as string)).toBe(true);
    const [first, second] = await Promise.all([limiter.consume('client'), limiter.consume('client')]); // a batch
    expect([first.allowed, second.allowed]).toEqual([true, true]);
    expect((await limiter.peek('client')).decidedBy.remaining).toBe(4);
    for (let i = 0; i < 2; i++) expect(await previousConsume(key as string)).toBe(true);
    expect((await limiter.consume('client')).decidedBy.remaining).toBe(1);
    expect(await previousConsume(key as string)).toBe(true);
    expect(await previousConsume(key as string)).toBe(false);
    expect((await limiter.consume('client')).allowed).toBe(false);
  });
});

const PREVIOUS_POLICIES_CHECK = readFileSync(
  new URL('./fixtures/check-policies-before-pairs.lua', import.meta.url),
  'utf8',
);

const ALGORITHMS = Object.keys(CODES) as (keyof typeof CODES)[];
const PAIRS = ALGORITHMS.flatMap((first) => ALGORITHMS.map((second) => [first, second] as const));

describe.each(PAIRS)('two policies (%s, then %s) during a rolling deploy', (first, second) => {
  it("the previous release's script of several policies and this release's scripts of two take turns on one key, and admit the limit", async () => {
    let nowMs = 1_767_225_600_000;
    const prefix = uniquePrefix('rolling-pair');
    const store = new RedisStore({ client: redis, prefix, clock: () => nowMs });
    const limiter = createLimiter({
      store,
      policies: [
        { limit: 6, window: '1m', algorithm: first },
        { limit: 4, window: '1h', algorithm: second },
      ],
    });
    /** A consume as the previous release sends it, to its script of several policies. */
    const previousConsume = async (key: string) => {
      const args: (string | number)[] = [2];
      for (const { algorithm, limit, windowMs, capacityUnits } of limiter.policies) {
        args.push(CODES[algorithm][0], limit, windowMs);
        if (algorithm === 'token-bucket') args.push(capacityUnits);
      }
      args.push(1, '', nowMs);
      const answer = await redis.eval(PREVIOUS_POLICIES_CHECK, 1, key, ...args.map(String));
      // Applied and written in whole numbers, it answers as text; otherwise { now, applied, … }.
      return typeof answer === 'string' || (answer as number[])[1] === 1;
    };

    expect((await limiter.consume('client')).allowed).toBe(true); // this release's script of two
    const [key] = await redis.keys(`${prefix}*`);
    expect(key).toBeDefined();
    expect(await previousConsume(key as string)).toBe(true);
    nowMs += 1_000;
    // Two at once: this release's batch script of two policies on one key.
    const both = await Promise.all([limiter.consume('client'), limiter.consume('client')]);
    expect(both.map((d) => [d.allowed, d.decidedBy.remaining])).toEqual([
      [true, 1],
      [true, 0],
    ]);
    // The hourly policy is spent: neither release admits more, a minute on either.
    expect(await previousConsume(key as string)).toBe(false);
    expect((await limiter.consume('client')).allowed).toBe(false);
    nowMs += 61_000;
    expect((await limiter.consume('client')).allowed).toBe(false);
    expect(await previousConsume(key as string)).toBe(false);
  });
});

describe.each(ALGORITHMS)('%s with a ban during a rolling deploy', (algorithm) => {
  it("the previous release's script and this release's script of a ban take turns on one key, and ban alike", async () => {
    let nowMs = 1_767_225_600_000;
    const prefix = uniquePrefix('rolling-ban');
    const limiter = createLimiter({
      store: new RedisStore({ client: redis, prefix, clock: () => nowMs }),
      policies: { limit: 3, window: '1m', algorithm },
      ban: { after: 2, duration: '10m' },
    });
    const [code, fields] = CODES[algorithm];
    const { limit, windowMs, capacityUnits } = limiter.policies[0] as (typeof limiter.policies)[number];
    /** A consume as the previous release sends it: its answer's applied, and when the ban ends. */
    const previousConsume = async (key: string) => {
      const args = [1, 1, code, fields, limit, windowMs, capacityUnits, 2, 600_000, 0, 1, 1, nowMs, '', 1];
      const answer = (await redis.eval(PREVIOUS_SETTLE, 1, key, ...args.map(String), 'consume')) as number[];
      return { allowed: answer[1] === 1, bannedUntil: Number(answer[2 + fields]) };
    };

    expect((await limiter.consume('client')).allowed).toBe(true); // this release's script of a ban
    const [key] = await redis.keys(`${prefix}*`);
    expect(key).toBeDefined();
    expect(await previousConsume(key as string)).toEqual({ allowed: true, bannedUntil: 0 });
    expect((await limiter.consume('client')).allowed).toBe(true);
    // At the limit: one refusal in a row each, and the second starts the ban.
    expect(await previousConsume(key as string)).toEqual({ allowed: false, bannedUntil: 0 });
    const banned = await limiter.consume('client');
    expect([banned.allowed, banned.reason]).toEqual([false, 'banned']);
    nowMs += 61_000; // the policy has room again; the ban holds
    expect(await previousConsume(key as string)).toEqual({
      allowed: false,
      bannedUntil: nowMs - 61_000 + 600_000,
    });
    expect((await limiter.consume('client')).reason).toBe('banned');
    nowMs += 600_000;
    expect((await limiter.consume('client')).allowed).toBe(true);
    expect(await previousConsume(key as string)).toEqual({ allowed: true, bannedUntil: 0 });
  });
});
