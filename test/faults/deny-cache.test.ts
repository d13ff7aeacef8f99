/**
 * The deny cache in front of Redis: a client that keeps knocking while it must wait costs no command,
 * gets the same answer the store would give, is let through the moment its wait is over, and is never
 * refused a smaller cost that fits sooner.
 */
import { createLimiter, RedisStore } from '@tollgate/core';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drivers } from '../frameworks/drivers.js';
import { connectRedis, uniquePrefix } from '../harness/clients.js';
import { manualClock } from '../harness/manual-clock.js';
import { commandCounts, type RedisProcess, startRedisServer } from '../harness/redis-server.js';

let server: RedisProcess;
let client: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  client = await connectRedis(server.url);
});

afterAll(async () => {
  client.disconnect();
  await server.stop();
});

/** Scripts Redis has run so far (EVALSHA and EVAL). */
async function scriptsRun(): Promise<number> {
  const counts = await commandCounts(server.port);
  return (counts.evalsha ?? 0) + (counts.eval ?? 0);
}

function limiterOnClock(limit: number, window: string) {
  const clock = manualClock();
  const store = new RedisStore({ client, prefix: uniquePrefix('deny-cache'), clock: clock.now });
  return { clock, limiter: createLimiter({ store, policies: { limit, window } }) };
}

describe('the deny cache', () => {
  it('answers a limited client in process until its wait is over, then asks Redis again', async () => {
    const { clock, limiter } = limiterOnClock(2, '10s');
    await limiter.consume('k');
    await limiter.consume('k');
    const denied = await limiter.consume('k');
    expect(denied).toMatchObject({ allowed: false, retryAfterMs: 5_000 });
    const before = await scriptsRun();
    for (let i = 0; i < 50; i++) {
      clock.advance(99);
      const again = await limiter.consume('k');
      expect(again.allowed).toBe(false);
      expect(again.retryAfterMs).toBe(5_000 - 99 * (i + 1)); // what the store would say now
    }
    expect(await scriptsRun()).toBe(before); // 50 checks, no command
    clock.advance(5_000 - 99 * 50);
    expect((await limiter.consume('k')).allowed).toBe(true);
    expect(await scriptsRun()).toBe(before + 1);
  });

  it('is exact for every cost: a smaller one that fits goes to Redis, a larger one is refused locally', async () => {
    const { clock, limiter } = limiterOnClock(10, '10s'); // one token a second
    expect((await limiter.consume('k', { cost: 8 })).allowed).toBe(true); // 2 left
    expect(await limiter.consume('k', { cost: 5 })).toMatchObject({ allowed: false, retryAfterMs: 3_000 });
    const before = await scriptsRun();
    expect(await limiter.consume('k', { cost: 6 })).toMatchObject({ allowed: false, retryAfterMs: 4_000 });
    expect(await scriptsRun()).toBe(before); // refused in process
    expect((await limiter.consume('k', { cost: 2 })).allowed).toBe(true); // fits now: Redis decides
    expect(await scriptsRun()).toBe(before + 1);
    clock.advance(1_000);
    expect((await limiter.consume('k', { cost: 1 })).allowed).toBe(true); // refilled, the cache stays out of it
  });

  it('forgets a client this process refunds or resets', async () => {
    const { limiter } = limiterOnClock(1, '1h');
    await limiter.consume('k');
    expect((await limiter.consume('k')).allowed).toBe(false);
    await limiter.refund('k');
    expect((await limiter.consume('k')).allowed).toBe(true);
    expect((await limiter.consume('k')).allowed).toBe(false);
    await limiter.reset('k');
    expect((await limiter.consume('k')).allowed).toBe(true);
  });

  it('can be switched off', async () => {
    const store = new RedisStore({ client, prefix: uniquePrefix('no-deny-cache') });
    const limiter = createLimiter({ store, policies: { limit: 1, window: '1h' }, denyCache: false });
    await limiter.consume('k');
    const before = await scriptsRun();
    for (let i = 0; i < 3; i++) expect((await limiter.consume('k')).allowed).toBe(false);
    expect(await scriptsRun()).toBe(before + 3);
  });

  it('stays bounded: the oldest denial is forgotten first', async () => {
    const store = new RedisStore({ client, prefix: uniquePrefix('bounded-deny-cache') });
    const limiter = createLimiter({ store, policies: { limit: 1, window: '1h' }, denyCache: { maxKeys: 2 } });
    for (const key of ['a', 'b', 'c']) {
      await limiter.consume(key);
      await limiter.consume(key); // denied: remembered
    }
    const before = await scriptsRun();
    await limiter.consume('b');
    await limiter.consume('c');
    expect(await scriptsRun()).toBe(before); // still remembered
    await limiter.consume('a');
    expect(await scriptsRun()).toBe(before + 1); // forgotten to make room
  });
});

describe.each(drivers)('$name behind the deny cache', (driver) => {
  it('answers repeat 429s with the same headers and no Redis command', async () => {
    const clock = manualClock();
    const store = new RedisStore({
      client,
      prefix: uniquePrefix(`deny-http-${driver.name}`),
      clock: clock.now,
    });
    const app = await driver.build({ global: { limit: 1, window: '1m', store } as never });
    try {
      expect((await app.send('GET', '/a')).status).toBe(200);
      const first = await app.send('GET', '/a');
      expect(first.status).toBe(429);
      const before = await scriptsRun();
      for (let i = 0; i < 20; i++) {
        const again = await app.send('GET', '/a');
        expect(again.status).toBe(429);
        expect(again.headers.ratelimit).toBe(first.headers.ratelimit);
        expect(again.headers['retry-after']).toBe(first.headers['retry-after']);
        expect(again.body).toBe(first.body);
      }
      expect(await scriptsRun()).toBe(before);
      clock.advance(Number(first.headers['retry-after']) * 1000);
      expect((await app.send('GET', '/a')).status).toBe(200);
    } finally {
      await app.close();
    }
  });
});
