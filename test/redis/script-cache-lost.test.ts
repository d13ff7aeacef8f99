/**
 * A check whose script Redis has lost (NOSCRIPT: a restart, a failover, SCRIPT FLUSH) is written again
 * with the script's source. When this process is too busy to read the refusal before the check's
 * timeout, the second call is still a call of its own: it decides, counted once, and the process does not
 * take its own lateness for a silent Redis. So are a reservation by id and a concurrency lease.
 */
import { createConcurrencyLimiter, createLimiter, RedisStore } from '@tollgate/core';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { uniquePrefix, untilReady } from '../harness/clients.js';
import { commandCounts, type RedisProcess, startRedisServer } from '../harness/redis-server.js';

let server: RedisProcess;
let client: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  // Without auto-pipelining, the store writes each call with the client's own evalsha and eval.
  client = new Redis(server.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
  await untilReady(client);
});

afterAll(async () => {
  client.disconnect();
  await server.stop();
});

/** Blocks this process's event loop, as a slow handler does. */
function blockFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

it('runs a check whose NOSCRIPT answer is read after its timeout, and the check behind it, once each', async () => {
  const limiter = createLimiter({
    store: new RedisStore({ client, prefix: uniquePrefix('noscript') }),
    policies: { limit: 5, window: '1m' },
    timeout: '100ms',
    onStoreError: 'throw',
  });
  // A first answer bounds the server's clock against this one: checks then carry a deadline Redis keeps.
  await limiter.consume('warm-up');
  await client.script('FLUSH');
  const before = await commandCounts(server.port);

  // The next EVALSHA is written, a second check queues behind it, and the loop blocks before the
  // NOSCRIPT answer can be read.
  let queued: Promise<unknown> = Promise.resolve();
  const evalsha = client.evalsha;
  client.evalsha = function writtenThenBusy(this: Redis, ...args: unknown[]) {
    client.evalsha = evalsha;
    const reply = Reflect.apply(evalsha, this, args);
    queued = limiter.consume('behind');
    setImmediate(() => blockFor(300));
    return reply;
  } as typeof evalsha;
  const decided = limiter.consume('busy');

  await expect(decided).resolves.toMatchObject({ allowed: true, degraded: false });
  await expect(queued).resolves.toMatchObject({ allowed: true, degraded: false });
  const after = await commandCounts(server.port);
  // Each written as EVALSHA; the first, refused NOSCRIPT, again as EVAL.
  expect([(after.evalsha ?? 0) - (before.evalsha ?? 0), (after.eval ?? 0) - (before.eval ?? 0)]).toEqual([
    2, 1,
  ]);
  expect((await limiter.peek('busy')).decidedBy.remaining).toBe(4);
  expect((await limiter.peek('behind')).decidedBy.remaining).toBe(4);
});

/** Makes the next EVALSHA of `client` block this process's loop for 300 ms once it is written. */
function busyAfterNextEvalsha(): void {
  const evalsha = client.evalsha;
  client.evalsha = function writtenThenBusy(this: Redis, ...args: unknown[]) {
    client.evalsha = evalsha;
    const reply = Reflect.apply(evalsha, this, args);
    setImmediate(() => blockFor(300));
    return reply;
  } as typeof evalsha;
}

it('makes a reservation by id whose NOSCRIPT answer is read after its timeout, once', async () => {
  const limiter = createLimiter({
    store: new RedisStore({ client, prefix: uniquePrefix('noscript-reserve') }),
    policies: { limit: 5, window: '1m' },
    timeout: '100ms',
    onStoreError: 'throw',
  });
  await limiter.consume('warm-up');
  await client.script('FLUSH');
  const before = await commandCounts(server.port);

  busyAfterNextEvalsha();
  const { decision } = await limiter.reserve('busy', 2, { id: 'order-1' });

  expect(decision).toMatchObject({ allowed: true, degraded: false });
  const after = await commandCounts(server.port);
  expect([(after.evalsha ?? 0) - (before.evalsha ?? 0), (after.eval ?? 0) - (before.eval ?? 0)]).toEqual([
    1, 1,
  ]);
  expect((await limiter.peek('busy')).decidedBy.remaining).toBe(3);
});

it('takes a lease whose NOSCRIPT answer is read after its timeout, once', async () => {
  const store = new RedisStore({ client, prefix: uniquePrefix('noscript-lease') });
  const leases = createConcurrencyLimiter({ store, limit: 2, timeout: '100ms', onStoreError: 'throw' });
  const warm = await leases.acquire('warm-up');
  await warm.lease?.release();
  await client.script('FLUSH');
  const before = await commandCounts(server.port);

  busyAfterNextEvalsha();
  const first = await leases.acquire('busy');

  expect(first).toMatchObject({ acquired: true, degraded: false });
  const after = await commandCounts(server.port);
  expect([(after.evalsha ?? 0) - (before.evalsha ?? 0), (after.eval ?? 0) - (before.eval ?? 0)]).toEqual([
    1, 1,
  ]);
  // One lease held: one more fits, and then none.
  expect(await leases.acquire('busy')).toMatchObject({ acquired: true, degraded: false });
  expect(await leases.acquire('busy')).toMatchObject({ acquired: false, degraded: false });
});
