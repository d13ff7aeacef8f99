/**
 * Fault injection with a real Redis that goes away: a check never hangs the request, fails open (or, if
 * asked, into the framework's error handling), logs once, and recovers when Redis is back.
 */
import { RedisStore } from '@tollgate/core';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, untilReady } from '../harness/clients.js';
import { type RedisProcess, startRedisServer } from '../harness/redis-server.js';
import { drivers } from '../http/drivers.js';

let server: RedisProcess;
let client: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  // What the adapters' READMEs recommend: fail fast rather than queue while Redis is away.
  client = await connectRedis(server.url);
});

afterAll(async () => {
  client.disconnect();
  await server.stop();
});

async function whileRedisIsDown(during: () => Promise<void>): Promise<void> {
  const port = server.port;
  await server.stop();
  try {
    await during();
  } finally {
    server = await startRedisServer([], port);
    await untilReady(client);
  }
}

describe.each(drivers)('$name when Redis goes away', (driver) => {
  it('fails open, logs once, and limits again once Redis is back', async () => {
    const logged: string[] = [];
    const logger = { warn: (line: string) => logged.push(line), error: (line: string) => logged.push(line) };
    const prefix = `outage:${driver.name}:${Date.now()}:`;
    const store = new RedisStore({ client, prefix, logger });
    const app = await driver.build({
      global: { limit: 2, window: '1h', store, logger, timeout: '2s' } as never,
    });
    try {
      expect((await app.send('GET', '/a')).status).toBe(200);
      await whileRedisIsDown(async () => {
        for (let i = 0; i < 3; i++) {
          const response = await app.send('GET', '/a');
          expect(response.status).toBe(200);
          expect(response.headers.ratelimit).toBeUndefined();
        }
        expect(logged.filter((line) => line.startsWith('[TOLLGATE_'))).toHaveLength(1);
      });
      // The new server is empty: the bucket starts full, and limiting resumes.
      expect((await app.send('GET', '/a')).status).toBe(200);
      expect((await app.send('GET', '/a')).status).toBe(200);
      expect((await app.send('GET', '/a')).status).toBe(429);
    } finally {
      await app.close();
    }
  });

  it('with failOpen: false, hands the store error to the framework (500), never a hang', async () => {
    const store = new RedisStore({ client, prefix: `outage-closed:${driver.name}:${Date.now()}:` });
    const logger = { warn: () => {}, error: () => {} };
    const app = await driver.build({
      global: { limit: 5, window: '1h', store, logger, failOpen: false } as never,
    });
    try {
      expect((await app.send('GET', '/a')).status).toBe(200);
      await whileRedisIsDown(async () => {
        expect((await app.send('GET', '/a')).status).toBe(500);
      });
    } finally {
      await app.close();
    }
  });
});
