/**
 * RedisStore on node-redis clients and clusters (v4 and v5), beyond the conformance table: the script
 * cache, errors, connection states, and the setup warnings. Each behaves as with ioredis.
 */
import {
  createLimiter,
  type NodeRedisClientLike,
  type NodeRedisClusterLike,
  RedisStore,
  StoreUnavailableError,
} from '@tollgate/core';
import type { Cluster, Redis } from 'ioredis';
import { createClient as createClient4, createCluster as createCluster4 } from 'redis4';
import { createClient as createClient5, createCluster as createCluster5 } from 'redis5';
import { afterAll, describe, expect, inject, it } from 'vitest';
import {
  connectCluster,
  connectNodeRedis,
  connectNodeRedisCluster,
  connectRedis,
  NODE_REDIS_MAJORS,
  type NodeRedisMajor,
  uniquePrefix,
} from '../harness/clients.js';
import { startRedisServer } from '../harness/redis-server.js';

const redis: Redis = await connectRedis();
const cluster: Cluster = await connectCluster();
afterAll(() => {
  redis.disconnect();
  cluster.disconnect();
});

/** A logger that keeps what it is given. */
function recorder() {
  const lines: string[] = [];
  return {
    lines,
    logger: { warn: (line: string) => lines.push(line), error: (line: string) => lines.push(line) },
  };
}

/** A node-redis client, not connected, as an app creates it. */
function createNodeRedis(major: NodeRedisMajor, options: { url: string; disableOfflineQueue?: boolean }) {
  const client = major === 4 ? createClient4(options) : createClient5(options);
  client.on('error', () => {});
  return client;
}

/** The client, with the Redis commands it is sent counted by name as they pass. */
function countCommands<C extends NodeRedisClientLike | NodeRedisClusterLike>(client: C) {
  const counts: Record<string, number> = {};
  const send = client.sendCommand.bind(client) as (...args: unknown[]) => Promise<unknown>;
  const sendCounted = (...args: unknown[]) => {
    const [name] = args.at(-1) as string[];
    counts[name as string] = (counts[name as string] ?? 0) + 1;
    return send(...args);
  };
  // node-redis keeps its state in private fields: everything else must reach the client itself.
  const counted = new Proxy(client, {
    get(target, property) {
      if (property === 'sendCommand') return sendCounted;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { counts, client: counted };
}

describe.each(NODE_REDIS_MAJORS)('RedisStore on node-redis %i', (major) => {
  describe.each(['Redis', 'Cluster'] as const)('on %s', (topology) => {
    const connect = () => (topology === 'Redis' ? connectNodeRedis(major) : connectNodeRedisCluster(major));
    const inspector = () => (topology === 'Redis' ? [redis] : cluster.nodes('master'));

    it('keeps working after SCRIPT FLUSH, falling back to EVAL on NOSCRIPT only', async () => {
      const connection = await connect();
      try {
        const { client, counts } = countCommands(connection);
        const limiter = createLimiter({
          store: new RedisStore({ client, prefix: uniquePrefix('noscript') }),
          policies: { limit: 3, window: '1h' },
          onStoreError: 'throw',
        });
        expect((await limiter.consume('k')).allowed).toBe(true);
        await Promise.all(inspector().map((node) => node.script('FLUSH')));
        const evalsBefore = counts.EVAL ?? 0;
        expect((await limiter.consume('k')).decidedBy.remaining).toBe(1);
        expect((await limiter.consume('k')).decidedBy.remaining).toBe(0);
        expect(counts.EVALSHA).toBe(3);
        expect((counts.EVAL ?? 0) - evalsBefore).toBe(1); // the one after FLUSH; the next EVALSHA finds it
      } finally {
        await connection.disconnect();
      }
    });

    it('does not retry errors other than NOSCRIPT, and counts them as Redis refusing, not as Redis gone', async () => {
      const connection = await connect();
      try {
        const prefix = uniquePrefix('wrongtype');
        const { client, counts } = countCommands(connection);
        const { lines, logger } = recorder();
        const store = new RedisStore({ client, prefix, logger, breaker: { threshold: 2 } });
        const limiter = createLimiter({ store, policies: { limit: 2, window: '1h' }, onStoreError: 'throw' });
        await limiter.consume('k'); // warms the script cache, so the next EVALSHA cannot be NOSCRIPT
        const key = (
          await Promise.all(inspector().map((node) => node.keys(`${prefix}*`)))
        ).flat()[0] as string;
        const owner = topology === 'Redis' ? redis : cluster;
        await owner.del(key);
        await owner.hset(key, 'not', 'a bucket');
        const before = { ...counts };
        await expect(limiter.consume('k')).rejects.toThrow(/WRONGTYPE/);
        expect(counts).toEqual({ ...before, EVALSHA: (before.EVALSHA ?? 0) + 1 });
        expect(lines).toEqual([]); // one refusal is below the breaker's threshold: no incident
        await owner.del(key);
        expect((await limiter.consume('k')).allowed).toBe(true);
      } finally {
        await connection.disconnect();
      }
    });
  });

  it('sends nothing while the connection is down: checks fail at once, and none is sent after it is back', async () => {
    const server = await startRedisServer();
    // Its offline queue is on, as by default: the store itself must hold nothing back.
    const client = createNodeRedis(major, { url: server.url });
    await client.connect();
    const { lines, logger } = recorder();
    const prefix = uniquePrefix('outage');
    const limiter = createLimiter({
      store: new RedisStore({ client, prefix, logger }),
      policies: { limit: 5, window: '1h' },
      onStoreError: 'throw',
      timeout: '5s',
    });
    try {
      expect((await limiter.consume('k')).decidedBy.remaining).toBe(4);
      await server.stop();
      await until(() => !client.isReady);
      for (let i = 0; i < 3; i++) {
        const startedAt = performance.now();
        await expect(limiter.consume('k')).rejects.toBeInstanceOf(StoreUnavailableError);
        expect(performance.now() - startedAt).toBeLessThan(250); // not the 5 s timeout
      }
      const restarted = await startRedisServer([], server.port);
      try {
        await until(() => client.isReady);
        // The new server is empty: had a check been queued and sent on reconnection, it would show here.
        expect((await limiter.consume('k')).decidedBy.remaining).toBe(4);
      } finally {
        await client.disconnect();
        await restarted.stop();
      }
      expect(lines.map((line) => line.slice(0, line.indexOf(']') + 1))).toEqual([
        '[TOLLGATE_REDIS_CLIENT_QUEUES]',
        '[TOLLGATE_STORE_UNAVAILABLE]',
        '[TOLLGATE_STORE_RECOVERED]',
      ]);
    } finally {
      await server.stop();
    }
  });

  it('at startup, a check waits for the first connection, up to its timeout', async () => {
    const client = createNodeRedis(major, { url: inject('redisUrl'), disableOfflineQueue: true });
    const limiter = createLimiter({
      store: new RedisStore({ client, prefix: uniquePrefix('startup') }),
      policies: { limit: 5, window: '1h' },
      onStoreError: 'throw',
      timeout: '100ms',
    });
    try {
      // Never connected within the timeout: the check gives up, it does not hang.
      await expect(limiter.consume('k')).rejects.toBeInstanceOf(StoreUnavailableError);
      // Connected while a check waits: the check goes through.
      const waiting = createLimiter({
        store: new RedisStore({ client, prefix: uniquePrefix('startup') }),
        policies: { limit: 5, window: '1h' },
        onStoreError: 'throw',
        timeout: '5s',
      }).consume('k');
      await client.connect();
      expect((await waiting).allowed).toBe(true);
    } finally {
      await client.disconnect();
    }
  });

  it.each([
    [{}, ['[TOLLGATE_REDIS_CLIENT_QUEUES]']],
    [{ disableOfflineQueue: true }, []],
  ])('warns about a client whose offline queue is on: %j', (options, codes) => {
    const { lines, logger } = recorder();
    new RedisStore({ client: createNodeRedis(major, { url: inject('redisUrl'), ...options }), logger });
    expect(lines.map((line) => line.slice(0, line.indexOf(']') + 1))).toEqual(codes);
    if (codes.length) expect(lines[0]).toContain('Create the client with { disableOfflineQueue: true }.');
  });

  it("warns about a cluster whose nodes' offline queue is on, once it can tell", async () => {
    const rootNodes = inject('redisClusterNodes').map(({ host, port }) => ({
      url: `redis://${host}:${port}`,
    }));
    const queueing = major === 4 ? createCluster4({ rootNodes }) : createCluster5({ rootNodes });
    queueing.on('error', () => {});
    const { lines, logger } = recorder();
    const limiter = createLimiter({
      store: new RedisStore({ client: queueing, logger, prefix: uniquePrefix('cluster-queue') }),
      policies: { limit: 5, window: '1h' },
    });
    await queueing.connect();
    try {
      await limiter.consume('k'); // a v4 cluster shows its nodes' options only once connected
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^\[TOLLGATE_REDIS_CLIENT_QUEUES\] .*\{ defaults: \{ disableOfflineQueue: true \} \}/,
      );
    } finally {
      await queueing.disconnect();
    }
    const failFast = await connectNodeRedisCluster(major);
    const quiet = recorder();
    new RedisStore({ client: failFast, logger: quiet.logger });
    expect(quiet.lines).toEqual([]);
    await failFast.disconnect();
  });

  it('warns once, after the first answer, when Redis may evict live buckets', async () => {
    const server = await startRedisServer(['--maxmemory', '100mb', '--maxmemory-policy', 'allkeys-lru']);
    const client = await connectNodeRedis(major, server.url);
    try {
      const { lines, logger } = recorder();
      const limiter = createLimiter({
        store: new RedisStore({ client, logger }),
        policies: { limit: 5, window: '1h' },
      });
      await limiter.consume('a');
      await limiter.consume('b');
      await until(() => lines.length > 0);
      expect(lines).toEqual([expect.stringMatching(/^\[TOLLGATE_REDIS_EVICTION_POLICY\] .*allkeys-lru/)]);
    } finally {
      await client.disconnect();
      await server.stop();
    }
  });
});

// node-redis 4's cluster routed evalSha() by no key: scripts went to random nodes, came back MOVED, and
// after a few redirections failed, so about one check in thirty took the insurance limiter.
it('node-redis 4 and 5 clusters run every script on the node that owns its key', async () => {
  for (const major of NODE_REDIS_MAJORS) {
    const client = await connectNodeRedisCluster(major);
    try {
      const limiter = createLimiter({
        store: new RedisStore({ client, prefix: uniquePrefix('routing') }),
        policies: { limit: 5, window: '1h' },
        onStoreError: 'throw',
      });
      const decisions = await Promise.all(Array.from({ length: 300 }, (_, i) => limiter.consume(`key-${i}`)));
      expect(decisions.every((decision) => decision.decidedBy.remaining === 4)).toBe(true);
    } finally {
      await client.disconnect();
    }
  }
});

it('takes node-redis clients and clusters as they are typed, connected or not', () => {
  const url = inject('redisUrl');
  const rootNodes = [{ url }];
  // These compile only if RedisStoreOptions.client accepts each library's own types.
  for (const client of [createClient4({ url }), createClient5({ url })])
    expect(new RedisStore({ client })).toBeDefined();
  for (const client of [createCluster4({ rootNodes }), createCluster5({ rootNodes })]) {
    expect(new RedisStore({ client, warnings: false })).toBeDefined();
  }
});

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for a condition');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
