/**
 * A Redis that stops answering without going away (CLIENT PAUSE): the first checks wait their timeout,
 * then the breaker opens and answers come at once from the insurance limiter; the scripts that were
 * waiting inside Redis change nothing when it resumes, since their deadline has passed.
 */
import { createLimiter, RedisStore } from '@tollgate/core';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, uniquePrefix } from '../harness/clients.js';
import { commandCounts, type RedisProcess, startRedisServer } from '../harness/redis-server.js';

let server: RedisProcess;
let client: Redis;
let admin: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  client = await connectRedis(server.url);
  admin = await connectRedis(server.url);
});

afterAll(async () => {
  client.disconnect();
  admin.disconnect();
  await server.stop();
});

/** Pauses every client of the server for `ms`; it resumes by itself. */
async function pauseRedis(ms: number): Promise<void> {
  await admin.call('CLIENT', 'PAUSE', String(ms), 'ALL');
}

/** Resolves once Redis runs commands again: a reply on `client` means all it sent before has run. */
async function untilResumed(): Promise<void> {
  await client.ping();
}

describe('RedisStore when Redis stops answering', () => {
  it('opens the breaker after the timeout, answers from the insurance at once, and recovers by itself', async () => {
    const logged: string[] = [];
    const logger = { warn: (line: string) => logged.push(line), error: (line: string) => logged.push(line) };
    // The pause outlasts timeout + cooldown, so the breaker probes again as soon as Redis resumes.
    const store = new RedisStore({
      client,
      prefix: uniquePrefix('paused'),
      logger,
      breaker: { cooldown: 800 },
    });
    const limiter = createLimiter({ store, policies: { limit: 10, window: '1h' }, timeout: 300 });
    expect((await limiter.consume('warm')).degraded).toBe(false); // the clock offset is known from here on
    const before = await commandCounts(server.port);

    await pauseRedis(1_500);
    const started = performance.now();
    const waited = await Promise.all(Array.from({ length: 5 }, () => limiter.consume('k')));
    expect(waited.every((d) => d.degraded && d.allowed)).toBe(true);
    expect(performance.now() - started).toBeLessThan(1_500); // their timeout, not the pause
    const fast = await Promise.all(Array.from({ length: 5 }, () => limiter.consume('k')));
    expect(fast.map((d) => d.degraded)).toEqual([true, true, true, true, true]);
    expect(logged.filter((line) => line.startsWith('[TOLLGATE_STORE_UNAVAILABLE]'))).toHaveLength(1);

    await untilResumed();
    // The first five went to Redis together, as one script call; the breaker sent none of the second five…
    const during = await commandCounts(server.port);
    expect((during.evalsha ?? 0) - (before.evalsha ?? 0)).toBe(1);
    // …and, run after their deadline, they charged nothing.
    const after = await limiter.consume('k');
    expect(after.degraded).toBe(false);
    expect(after.decidedBy.remaining).toBe(9);
    expect(logged.filter((line) => line.startsWith('[TOLLGATE_STORE_RECOVERED]'))).toHaveLength(1);
  });
});

describe('reservations by id when Redis stops answering', () => {
  it('a reserve or settle that Redis runs after its deadline changes nothing: the settle can be sent again, and charges once', async () => {
    const store = new RedisStore({
      client,
      prefix: uniquePrefix('paused-by-id'),
      logger: { warn: () => {}, error: () => {} },
      breaker: { cooldown: 100 },
    });
    const limiter = createLimiter({ store, policies: { limit: 10, window: '1h' }, timeout: 200 });
    const reserved = await limiter.reserve('k', 4, { id: 'job' }); // the clock offset is known from here on
    expect(reserved.decision).toMatchObject({ allowed: true, degraded: false });

    await pauseRedis(700);
    await expect(limiter.settle('k', 'job', 1)).rejects.toMatchObject({ code: 'TOLLGATE_STORE_UNAVAILABLE' });
    const late = await limiter.reserve('k', 2, { id: 'late' }); // decided by the insurance limiter
    expect(late.decision).toMatchObject({ allowed: true, degraded: true });
    await untilResumed(); // both scripts have run by now, past their deadlines

    // The breaker lets calls through again after its cooldown; until then they are refused at once.
    let settled: Awaited<ReturnType<typeof limiter.settle>> | undefined;
    for (let tries = 0; settled === undefined && tries < 40; tries++) {
      settled = await limiter
        .settle('k', 'job', 1)
        .catch(() => new Promise<undefined>((resolve) => setTimeout(resolve, 25)));
    }
    expect(settled).toEqual({ settled: true, reservedCost: 4 }); // the first settle had changed nothing
    expect(await limiter.settle('k', 'late', 0)).toEqual({ settled: false, reason: 'unknown' });
    expect((await limiter.peek('k')).decidedBy.remaining).toBe(9); // 1 charged, once; 'late' never reached Redis' buckets
  });
});
