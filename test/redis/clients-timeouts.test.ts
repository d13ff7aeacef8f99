/**
 * A client's own command timeout beside the limiter's `timeout`: node-redis 6's default 5 s one, and
 * Valkey GLIDE's `requestTimeout` (default 250 ms). Whichever gives up first answers the check (from the
 * insurance limiter); what matters for exactness is whether Redis may still run a check after that.
 */
import { createLimiter, RedisStore } from '@tollgate/core';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectGlide, connectNodeRedis, connectRedis, uniquePrefix } from '../harness/clients.js';
import { type RedisProcess, startRedisServer } from '../harness/redis-server.js';

let server: RedisProcess;
let admin: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  admin = await connectRedis(server.url);
});

afterAll(async () => {
  admin.disconnect();
  await server.stop();
});

/** Pauses every client of the server for `ms`; it resumes by itself. */
async function pauseRedis(ms: number): Promise<void> {
  await admin.call('CLIENT', 'PAUSE', String(ms), 'ALL');
}

describe('node-redis 6', () => {
  it('never rejects a check already written: its 5 s command timeout only runs until the write', async () => {
    const client = await connectNodeRedis(6, server.url); // its defaults: RESP3, commandOptions.timeout 5 s
    try {
      const limiter = createLimiter({
        store: new RedisStore({ client, prefix: uniquePrefix('nr6-timeout') }),
        policies: { limit: 5, window: '1h' },
        onStoreError: 'throw',
        timeout: '10s',
      });
      await limiter.consume('k');
      await pauseRedis(6_000);
      const started = performance.now();
      const paused = await limiter.consume('k'); // waits out the pause: node-redis does not give up at 5 s
      expect(performance.now() - started).toBeGreaterThan(5_500);
      expect(paused.degraded).toBe(false);
      expect(paused.decidedBy.remaining).toBe(3);
      expect((await limiter.consume('k')).decidedBy.remaining).toBe(2); // charged once each
    } finally {
      await client.disconnect();
    }
  }, 20_000);
});

describe('Valkey GLIDE', () => {
  // Why the core README says to create GLIDE with requestTimeout equal to the limiter's timeout.
  it.each([
    [250, true, 'its default, shorter: GLIDE gives up, and Redis still charges the check after the pause'],
    [1_000, false, 'equal: Redis answers the check within the timeout'],
  ])(
    'requestTimeout %i ms, limiter timeout 1 s, a 600 ms pause: degraded %s (%s)',
    async (requestTimeout, degraded) => {
      const client = await connectGlide(server.url, { requestTimeout });
      try {
        const limiter = createLimiter({
          store: new RedisStore({ client, prefix: uniquePrefix('glide-timeout'), logger: silent }),
          policies: { limit: 5, window: '1h' },
          timeout: '1s',
        });
        await limiter.consume('k');
        await pauseRedis(600);
        expect((await limiter.consume('k')).degraded).toBe(degraded); // by the insurance limiter, or by Redis
        await new Promise((resolve) => setTimeout(resolve, 1_200)); // the pause, and the breaker's cooldown
        // Either way Redis ran the paused check once: with the short requestTimeout it was counted twice,
        // by the insurance limiter and on Redis. That errs towards limiting, never towards admitting.
        expect((await limiter.consume('k')).decidedBy.remaining).toBe(2);
      } finally {
        client.close();
      }
    },
  );
});

const silent = { warn: () => {}, error: () => {} };
