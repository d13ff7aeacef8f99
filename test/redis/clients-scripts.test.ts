/**
 * How the store runs its scripts through every client library it takes (ioredis, iovalkey, node-redis 4
 * to 6, Valkey GLIDE), on Redis and on Cluster: EVALSHA, and EVAL only after NOSCRIPT; no retry of any
 * other error; on a Cluster, each script on the node that owns its key.
 */
import { createLimiter, RedisStore } from '@tollgate/core';
import type { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLIENT_NAMES,
  type ClientConnection,
  connectClient,
  connectCluster,
  connectRedis,
  uniquePrefix,
} from '../harness/clients.js';
import { commandCounts, type RedisProcess, startRedisServer } from '../harness/redis-server.js';

// Standalone: a server of this file's own, so that its command counts are this file's alone.
let server: RedisProcess;
let redis: Redis;
let cluster: Cluster;

beforeAll(async () => {
  server = await startRedisServer();
  redis = await connectRedis(server.url);
  cluster = await connectCluster();
});

afterAll(async () => {
  redis.disconnect();
  cluster.disconnect();
  await server.stop();
});

const TOPOLOGIES = ['Redis', 'Cluster'] as const;

/** How many EVALSHA and EVAL the standalone server ran; on Cluster, none is counted (other files share it). */
async function scriptCalls(topology: 'Redis' | 'Cluster') {
  if (topology === 'Cluster') return { evalsha: 0, eval: 0 };
  const counts = await commandCounts(server.port);
  return { evalsha: counts.evalsha ?? 0, eval: counts.eval ?? 0 };
}

function recorder() {
  const lines: string[] = [];
  return {
    lines,
    logger: { warn: (line: string) => lines.push(line), error: (line: string) => lines.push(line) },
  };
}

describe.each(CLIENT_NAMES)('RedisStore scripts through %s', (name) => {
  describe.each(TOPOLOGIES)('on %s', (topology) => {
    const connect = (): Promise<ClientConnection> => connectClient(name, topology, { url: server.url });
    const nodes = () => (topology === 'Redis' ? [redis] : cluster.nodes('master'));
    const owner = () => (topology === 'Redis' ? redis : cluster);

    it('keeps working after SCRIPT FLUSH, falling back to EVAL on NOSCRIPT only, and runs each check once', async () => {
      const connection = await connect();
      try {
        const limiter = createLimiter({
          store: new RedisStore({ client: connection.client, prefix: uniquePrefix('noscript') }),
          policies: { limit: 3, window: '1h' },
          onStoreError: 'throw',
        });
        expect((await limiter.consume('k')).decidedBy.remaining).toBe(2); // the script is cached from here on
        const before = await scriptCalls(topology);
        await Promise.all(nodes().map((node) => node.script('FLUSH')));
        expect((await limiter.consume('k')).decidedBy.remaining).toBe(1); // NOSCRIPT, then EVAL: charged once
        expect((await limiter.consume('k')).decidedBy.remaining).toBe(0); // EVALSHA finds it again
        const after = await scriptCalls(topology);
        if (topology === 'Redis')
          expect(after).toEqual({ evalsha: before.evalsha + 2, eval: before.eval + 1 });
      } finally {
        await connection.close();
      }
    });

    it('does not retry errors other than NOSCRIPT, and counts them as Redis refusing, not as Redis gone', async () => {
      const connection = await connect();
      try {
        const prefix = uniquePrefix('wrongtype');
        const { lines, logger } = recorder();
        const store = new RedisStore({
          client: connection.client,
          prefix,
          logger,
          breaker: { threshold: 2 },
        });
        const limiter = createLimiter({ store, policies: { limit: 2, window: '1h' }, onStoreError: 'throw' });
        await limiter.consume('k'); // warms the script cache, so the next EVALSHA cannot be NOSCRIPT
        const [key] = (await Promise.all(nodes().map((node) => node.keys(`${prefix}*`)))).flat();
        await owner().del(key as string);
        await owner().hset(key as string, 'not', 'a bucket');
        const before = await scriptCalls(topology);
        await expect(limiter.consume('k')).rejects.toThrow(/WRONGTYPE/);
        const after = await scriptCalls(topology);
        if (topology === 'Redis') expect(after).toEqual({ evalsha: before.evalsha + 1, eval: before.eval });
        expect(lines).toEqual([]); // one refusal is below the breaker's threshold: no incident
        await owner().del(key as string);
        expect((await limiter.consume('k')).allowed).toBe(true);
      } finally {
        await connection.close();
      }
    });
  });

  it('on Cluster, runs every script on the node that owns its key', async () => {
    const connection = await connectClient(name, 'Cluster');
    try {
      const limiter = createLimiter({
        store: new RedisStore({ client: connection.client, prefix: uniquePrefix('routing') }),
        policies: { limit: 5, window: '1h' },
        onStoreError: 'throw',
      });
      const decisions = await Promise.all(Array.from({ length: 300 }, (_, i) => limiter.consume(`key-${i}`)));
      expect(decisions.every((decision) => decision.decidedBy.remaining === 4)).toBe(true);
    } finally {
      await connection.close();
    }
  });
});
