/**
 * The events of a real Redis outage: the breaker opens once, each check that takes the fallback is a
 * store error and a degraded decision, and the breaker closes once Redis is back; no event carries the
 * raw key.
 */
import {
  BREAKER_CLOSE_CHANNEL,
  BREAKER_OPEN_CHANNEL,
  createLimiter,
  DECISION_CHANNEL,
  RedisStore,
  STORE_ERROR_CHANNEL,
  subscribeTollgate,
  type TollgateChannel,
  type TollgateEvents,
} from '@tollgate/core';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectRedis, untilReady } from '../harness/clients.js';
import { type RedisProcess, startRedisServer } from '../harness/redis-server.js';

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

function record<Name extends TollgateChannel>(name: Name, stops: (() => void)[]): TollgateEvents[Name][] {
  const seen: TollgateEvents[Name][] = [];
  stops.push(subscribeTollgate(name, (event) => seen.push(event)));
  return seen;
}

it('publishes the breaker opening and closing, store errors and degraded decisions, and never the key', async () => {
  const stops: (() => void)[] = [];
  const opened = record(BREAKER_OPEN_CHANNEL, stops);
  const closed = record(BREAKER_CLOSE_CHANNEL, stops);
  const errors = record(STORE_ERROR_CHANNEL, stops);
  const decisions = record(DECISION_CHANNEL, stops);
  const quiet = { warn: () => {}, error: () => {} };
  const store = new RedisStore({ client, prefix: 'events:', logger: quiet });
  const limiter = createLimiter({ store, policies: { limit: 5, window: '1h' }, namespace: 'outage' });
  try {
    expect((await limiter.consume('user:ada@example.com')).allowed).toBe(true);
    const port = server.port;
    await server.kill();
    for (let i = 0; i < 3; i++) expect((await limiter.consume('user:ada@example.com')).degraded).toBe(true);
    expect(opened).toEqual([{ store, prefix: 'events:', reason: expect.any(String) }]);
    expect(errors).toHaveLength(3);
    for (const event of errors) {
      expect(event).toMatchObject({
        limiter: 'outage',
        operation: 'consume',
        errorType: 'StoreUnavailableError',
      });
    }
    server = await startRedisServer([], port);
    await untilReady(client);
    expect((await limiter.consume('user:ada@example.com')).degraded).toBe(false);
    expect(closed).toEqual([
      { store, prefix: 'events:', downForMs: expect.any(Number), fallbacks: expect.any(Number) },
    ]);
    expect(closed[0]?.downForMs).toBeGreaterThan(0);
    expect(decisions.map((event) => event.outcome)).toEqual([
      'allowed',
      'degraded',
      'degraded',
      'degraded',
      'allowed',
    ]);
    const published = JSON.stringify([errors, decisions, opened.map((e) => e.reason)]);
    expect(published).not.toContain('ada@example.com');
  } finally {
    for (const stop of stops) stop();
  }
});
