/**
 * Token slices on a real Redis and Redis Cluster: one script call per slice, leftovers given back before
 * the next slice is taken, and exact admission under concurrency when no leftover is given back.
 */
import { createLimiter, type Policy, RedisStore } from '@tollgate/core';
import type { Cluster, Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { connectCluster, connectRedis, uniquePrefix } from '../harness/clients.js';

const redis: Redis = await connectRedis();
const cluster: Cluster = await connectCluster();
afterAll(() => {
  redis.disconnect();
  cluster.disconnect();
});

const POLICY = { limit: 100, window: '1h', algorithm: 'fixed-window' } as const satisfies Policy;

/** Counts script calls made through a real client, passing each one on unchanged. */
function countingClient(client: Redis) {
  const calls = { scripts: 0 };
  return {
    calls,
    client: {
      evalsha(...args: Parameters<Redis['evalsha']>) {
        calls.scripts++;
        return client.evalsha(...args);
      },
      eval(...args: Parameters<Redis['eval']>) {
        calls.scripts++;
        return client.eval(...args);
      },
      del: (...keys: string[]) => client.del(...keys),
    },
  };
}

/** A sliced limiter and a plain one on the same buckets: the plain one's peek reads the store itself. */
function limiters(store: RedisStore, slice: NonNullable<Policy['slice']>) {
  return {
    sliced: createLimiter({ store, policies: { ...POLICY, slice }, namespace: 'slices' }),
    plain: createLimiter({ store, policies: POLICY, namespace: 'slices' }),
  };
}

describe('token slices on Redis', () => {
  it('take one script call per slice and spend the rest in process', async () => {
    const { client, calls } = countingClient(redis);
    const { sliced, plain } = limiters(new RedisStore({ client, prefix: uniquePrefix('slices') }), {
      size: 10,
    });
    // A lone consume and a peek run different scripts: once loaded, each call below is one EVALSHA.
    await sliced.consume('warm-up');
    await plain.peek('warm-up');
    calls.scripts = 0;
    for (let i = 0; i < 10; i++) expect((await sliced.consume('tenant')).allowed).toBe(true);
    expect(calls.scripts).toBe(1);
    expect((await plain.peek('tenant')).decidedBy.remaining).toBe(90);
    await sliced.consume('tenant');
    expect(calls.scripts).toBe(3); // the plain peek, then the next slice
  });

  it('give back an expired slice before taking the next one', async () => {
    let nowMs = 1_700_000_000_000;
    const store = new RedisStore({ client: redis, prefix: uniquePrefix('slices-ttl'), clock: () => nowMs });
    const { sliced, plain } = limiters(store, { size: 10, ttl: '1s' });
    for (let i = 0; i < 3; i++) await sliced.consume('tenant');
    nowMs += 1_000;
    const decision = await sliced.consume('tenant');
    expect(decision.decidedBy.remaining).toBe(96); // 100 − 3 − 1
    expect((await plain.peek('tenant')).decidedBy.remaining).toBe(87); // 4 admitted, 9 in the new slice
  });

  it.each([
    ['Redis', () => redis],
    ['Redis Cluster', () => cluster],
  ] as const)('admit exactly the limit to 500 concurrent consumes on %s', async (_name, client) => {
    const { sliced, plain } = limiters(
      new RedisStore({ client: client(), prefix: uniquePrefix('slices-race') }),
      {
        size: 10,
      },
    );
    const decisions = await Promise.all(Array.from({ length: 500 }, () => sliced.consume('tenant')));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(100);
    expect((await plain.peek('tenant')).decidedBy.remaining).toBe(0);
  });
});
