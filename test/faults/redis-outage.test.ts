/**
 * Fault injection with a real Redis that dies under load and comes back: every request is answered at
 * once by the insurance limiter (limited, with headers), nothing is queued or sent to Redis later, the
 * incident is logged once each way, and the shared limit holds again once Redis is back — no restart.
 */

import { createServer, type Socket } from 'node:net';
import { createLimiter, RedisStore, StoreUnavailableError } from '@tollgate/core';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp, TestResponse } from '../frameworks/app-spec.js';
import { drivers } from '../frameworks/drivers.js';
import { connectNodeRedis, connectRedis, NODE_REDIS_MAJORS, untilReady } from '../harness/clients.js';
import { commandCounts, type RedisProcess, startRedisServer } from '../harness/redis-server.js';

let server: RedisProcess;
let client: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  // What the READMEs show: fail fast rather than queue while Redis is away.
  client = await connectRedis(server.url);
});

afterAll(async () => {
  client.disconnect();
  await server.stop();
});

/** Kills Redis (SIGKILL, as a crash), runs `during`, then starts an empty Redis on the same port. */
async function whileRedisIsDead(during: () => Promise<void>): Promise<void> {
  const port = server.port;
  await server.kill();
  try {
    await during();
  } finally {
    server = await startRedisServer([], port);
    await untilReady(client);
  }
}

/** Sends `count` requests of one client at once and times each answer. */
async function burst(
  app: TestApp,
  count: number,
  clientId = 'a',
): Promise<{ response: TestResponse; ms: number }[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const started = performance.now();
      const response = await app.send('GET', '/a', { 'x-client': clientId });
      return { response, ms: performance.now() - started };
    }),
  );
}

const statuses = (answers: { response: TestResponse }[]) => answers.map((a) => a.response.status);

it('hands out a StoreUnavailableError without a stack trace of its own while Redis is away', async () => {
  const store = new RedisStore({ client, prefix: 'outage-errors:', logger: silent });
  const errors: unknown[] = [];
  const limiter = createLimiter({
    store,
    policies: { limit: 5, window: '1h' },
    onStoreError: (error) => {
      errors.push(error);
      return 'insurance';
    },
  });
  const stackTraceLimit = Error.stackTraceLimit;
  await whileRedisIsDead(async () => {
    for (let i = 0; i < 3; i++) expect((await limiter.consume('a')).allowed).toBe(true);
  });
  expect(errors).toHaveLength(3);
  for (const error of errors) {
    expect(error).toBeInstanceOf(StoreUnavailableError);
    // Each check during an outage gets one: its frames cost more than the insurance's decision.
    expect((error as Error).stack).toMatch(/^StoreUnavailableError: [^\n]*$/);
  }
  // A client's own error, given as the cause, keeps its stack.
  const caused = new StoreUnavailableError('Redis is unavailable: read ECONNRESET', {
    cause: new Error('read'),
  });
  expect(caused.stack).toMatch(/^StoreUnavailableError: [^\n]*$/);
  expect((caused.cause as Error).stack).toMatch(/\n\s+at /);
  expect(Error.stackTraceLimit).toBe(stackTraceLimit);
});

describe.each(drivers)('$name when Redis dies under load', (driver) => {
  it('limits per process while it is away, replays nothing, and limits on Redis again when it is back', async () => {
    const logged: string[] = [];
    const logger = { warn: (line: string) => logged.push(line), error: (line: string) => logged.push(line) };
    const store = new RedisStore({ client, prefix: `outage:${driver.name}:`, logger });
    // A timeout far above what any answer below may take: a request that waited for it would show.
    const key = (request: never) => driver.reader.header(request, 'x-client');
    const app = await driver.build({
      global: { limit: 5, window: '1h', name: 'outage', store, logger, timeout: '10s', key } as never,
    });
    try {
      const inFlight = burst(app, 20); // Redis dies while these are on their way
      await whileRedisIsDead(async () => {
        const before = await inFlight;
        const during = await burst(app, 20);
        for (const { response, ms } of [...before, ...during]) {
          expect([200, 429]).toContain(response.status);
          expect(response.headers.ratelimit, 'every answer carries rate-limit headers').toBeDefined();
          expect(ms, 'answered at once, not after the timeout').toBeLessThan(2_000);
        }
        // The insurance limiter admits at most the limit in this process, whatever Redis had counted.
        expect(statuses(during).filter((status) => status === 200).length).toBeLessThanOrEqual(5);
        expect(statuses(during)).toContain(429);
        expect(logged.filter((line) => line.startsWith('[TOLLGATE_STORE_UNAVAILABLE]'))).toHaveLength(1);
      });
      // Nothing sent while Redis was away reaches the new server: no script ran there yet.
      const counts = await commandCounts(server.port);
      expect(counts.evalsha ?? 0).toBe(0);
      expect(counts.eval ?? 0).toBe(0);
      // Redis decides again: a new client gets exactly the limit from it (client a's denials before the
      // outage are still remembered by the deny cache; the restarted server lost them).
      expect(statuses(await burst(app, 8, 'b')).sort()).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
      expect((await commandCounts(server.port)).evalsha).toBeGreaterThan(0);
      expect(logged.filter((line) => line.startsWith('[TOLLGATE_STORE_RECOVERED]'))).toHaveLength(1);
    } finally {
      await app.close();
    }
  });

  it('answers a route whose cost is more than the insurance share holds with 429s and a wait, never a 403', async () => {
    const store = new RedisStore({ client, prefix: `outage-cost:${driver.name}:`, logger: silent });
    const app = await driver.build({
      global: {
        limit: 10,
        window: '1s',
        cost: 3,
        insurance: { instances: 4 },
        store,
        logger: silent,
      } as never,
    });
    try {
      expect((await app.send('GET', '/a')).status).toBe(200);
      await whileRedisIsDead(async () => {
        const [first, second] = [await app.send('GET', '/a'), await app.send('GET', '/a')];
        expect(first.status).toBe(200); // the share (2 of the 10) is full: charged whole
        expect(second.status).toBe(429);
        expect(Number(second.headers['retry-after'])).toBeGreaterThan(0);
      });
    } finally {
      await app.close();
    }
  });

  it("with onStoreError: 'deny', hands the store error to the framework (500) at once, never a hang", async () => {
    const store = new RedisStore({ client, prefix: `outage-deny:${driver.name}:`, logger: silent });
    const app = await driver.build({
      global: { limit: 5, window: '1h', store, logger: silent, onStoreError: 'deny' } as never,
    });
    try {
      expect((await app.send('GET', '/a')).status).toBe(200);
      await whileRedisIsDead(async () => {
        expect((await app.send('GET', '/a')).status).toBe(500);
      });
    } finally {
      await app.close();
    }
  });
});

describe('a store made from a connected client, whose first check comes while the client reconnects', () => {
  /** A limiter on a fresh store of `storeClient` that throws store errors, with a timeout of 5 s. */
  function limiterOn(storeClient: ConstructorParameters<typeof RedisStore>[0]['client']) {
    const limiter = createLimiter({
      store: new RedisStore({ client: storeClient, prefix: 'outage-first:', logger: silent }),
      policies: { limit: 5, window: '1h' },
      onStoreError: 'throw',
      timeout: '5s',
    });
    return limiter;
  }

  it('fails at once on ioredis, not after the timeout as while a client makes its first connection', async () => {
    const own = await startRedisServer();
    const ioredis = await connectRedis(own.url);
    const limiter = limiterOn(ioredis);
    // Redis gone, and the port held by a server that accepts the connection but never answers: ioredis
    // stays connected but not ready ('connect'), as while its first connection is being made.
    await own.kill();
    const sockets: Socket[] = [];
    const silentServer = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silentServer.listen(own.port, '127.0.0.1', resolve));
    try {
      if (ioredis.status !== 'connect') await new Promise((resolve) => ioredis.once('connect', resolve));
      const started = performance.now();
      await expect(limiter.consume('k')).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(performance.now() - started).toBeLessThan(2_000);
    } finally {
      ioredis.disconnect();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silentServer.close(resolve));
    }
  });

  it.each(NODE_REDIS_MAJORS)('fails at once on node-redis %i, not after the timeout', async (major) => {
    const own = await startRedisServer();
    const nodeRedis = await connectNodeRedis(major, own.url);
    const limiter = limiterOn(nodeRedis);
    await own.kill();
    try {
      while (nodeRedis.isReady) await new Promise((resolve) => setImmediate(resolve));
      const started = performance.now();
      await expect(limiter.consume('k')).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(performance.now() - started).toBeLessThan(2_000);
    } finally {
      await nodeRedis.disconnect();
    }
  });
});

const silent = { warn: () => {}, error: () => {} };
