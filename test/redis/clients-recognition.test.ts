/**
 * Which clients the store takes, and as what: each library's client is told apart by its shape and
 * driven by its own adapter — seen here through what the store warns about (each family's settings that
 * queue commands) — and any other client is refused at construction, with the supported ones named.
 */
import { createLimiter, RedisStore, StoreUnavailableError } from '@tollgate/core';
import type { GlideClient, GlideClusterClient } from '@valkey/valkey-glide';
import { Redis as IoRedis, Cluster as IoRedisCluster } from 'ioredis';
import { Redis as Valkey, Cluster as ValkeyCluster } from 'iovalkey';
import { createClient as createClient6, createCluster as createCluster6 } from 'redis6';
import { describe, expect, inject, it } from 'vitest';
import { connectClient, connectGlide, connectGlideCluster, uniquePrefix } from '../harness/clients.js';
import { startRedisServer } from '../harness/redis-server.js';

function recorder() {
  const lines: string[] = [];
  const codes = () => lines.map((line) => line.slice(0, line.indexOf(']') + 1));
  return {
    lines,
    codes,
    logger: { warn: (line: string) => lines.push(line), error: (line: string) => lines.push(line) },
  };
}

const SUPPORTED =
  'a node-redis (v4 to v6) client or cluster, a Valkey GLIDE GlideClient or GlideClusterClient, ' +
  'or an ioredis or iovalkey Redis or Cluster';

describe('a client the store does not know', () => {
  it.each([
    [undefined, 'undefined'],
    [null, 'null'],
    ['redis://localhost:6379', 'a string'],
    [{}, 'an object'],
    [{ evalsha: async () => 0 }, 'an object'], // half of ioredis's shape
    [{ customCommand: async () => 0 }, 'an object'], // half of GLIDE's
    [new (class Memcached {})(), 'an object of class Memcached'],
  ])('is refused at construction, naming the supported clients: %s', (client, got) => {
    expect(() => new RedisStore({ client } as never)).toThrow(
      new TypeError(`RedisStore needs { client }: ${SUPPORTED}; got ${got}`),
    );
  });
});

describe('iovalkey, taken as ioredis (its fork: the same classes)', () => {
  it('warns about a Redis that queues, with the ioredis fix', () => {
    const { lines, codes, logger } = recorder();
    const client = new Valkey(inject('redisUrl'), { lazyConnect: true });
    new RedisStore({ client, logger });
    expect(codes()).toEqual(['[TOLLGATE_REDIS_CLIENT_QUEUES]']);
    expect(lines[0]).toContain('enableOfflineQueue is on and maxRetriesPerRequest is 20, not 0');
    expect(lines[0]).toContain('{ enableOfflineQueue: false, maxRetriesPerRequest: 0 }');
    client.disconnect();
  });

  it.each([
    ['iovalkey', ValkeyCluster],
    ['ioredis', IoRedisCluster],
  ] as const)(
    'knows a %s Cluster made without redisOptions for a Cluster: it never resends',
    (_name, ClusterClass) => {
      const { lines, logger } = recorder();
      const client = new ClusterClass(inject('redisClusterNodes'), { lazyConnect: true });
      new RedisStore({ client, logger });
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('(enableOfflineQueue is on)'); // not maxRetriesPerRequest, which a Cluster ignores
      client.disconnect();
    },
  );

  it('warns about nothing when made to fail fast, and connects a lazy client itself', async () => {
    const { lines, logger } = recorder();
    const options = { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 };
    const client = new Valkey(inject('redisUrl'), options);
    client.on('error', () => {});
    try {
      const limiter = createLimiter({
        store: new RedisStore({ client, logger, prefix: uniquePrefix('lazy') }),
        policies: { limit: 5, window: '1h' },
        onStoreError: 'throw',
      });
      expect((await limiter.consume('k')).decidedBy.remaining).toBe(4);
      expect(lines).toEqual([]);
      // ioredis itself is taken the same way.
      new RedisStore({ client: new IoRedis(inject('redisUrl'), options), logger });
      expect(lines).toEqual([]);
    } finally {
      client.disconnect();
    }
  });
});

describe('node-redis 6', () => {
  it.each([
    [{}, ['[TOLLGATE_REDIS_CLIENT_QUEUES]']],
    [{ disableOfflineQueue: true }, []],
  ])('is taken as node-redis, not connected yet, and warns about its offline queue: %j', (options, codes) => {
    const recorded = recorder();
    new RedisStore({
      client: createClient6({ url: inject('redisUrl'), ...options }),
      logger: recorded.logger,
    });
    expect(recorded.codes()).toEqual(codes);
    if (codes.length) expect(recorded.lines[0]).toContain('{ disableOfflineQueue: true }');
  });

  it('takes its cluster, not connected yet', () => {
    const rootNodes = inject('redisClusterNodes').map(({ host, port }) => ({
      url: `redis://${host}:${port}`,
    }));
    expect(new RedisStore({ client: createCluster6({ rootNodes }), warnings: false })).toBeDefined();
  });
});

describe('Valkey GLIDE', () => {
  it('takes a GlideClient and a GlideClusterClient as they are typed, and warns about neither', async () => {
    const { lines, logger } = recorder();
    const client: GlideClient = await connectGlide();
    const clusterClient: GlideClusterClient = await connectGlideCluster();
    try {
      for (const glide of [client, clusterClient]) {
        const limiter = createLimiter({
          store: new RedisStore({ client: glide, logger, prefix: uniquePrefix('glide') }),
          policies: { limit: 5, window: '1h' },
          onStoreError: 'throw',
        });
        expect((await limiter.consume('k')).decidedBy.remaining).toBe(4);
      }
      expect(lines).toEqual([]);
    } finally {
      client.close();
      clusterClient.close();
    }
  });

  it('fails checks at once once the client is closed, sending nothing', async () => {
    const client = await connectGlide();
    const { codes, logger } = recorder();
    const limiter = createLimiter({
      store: new RedisStore({ client, logger, prefix: uniquePrefix('closed') }),
      policies: { limit: 5, window: '1h' },
      onStoreError: 'throw',
    });
    expect((await limiter.consume('k')).allowed).toBe(true);
    client.close();
    const started = performance.now();
    await expect(limiter.consume('k')).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(performance.now() - started).toBeLessThan(50);
    expect(codes()).toEqual(['[TOLLGATE_STORE_UNAVAILABLE]']);
  });
});

describe.each(['node-redis 6', 'valkey-glide'] as const)('%s (RESP3 by default)', (name) => {
  it('reads CONFIG GET in its own shape: warns once when Redis may evict live buckets', async () => {
    const server = await startRedisServer(['--maxmemory', '100mb', '--maxmemory-policy', 'allkeys-lru']);
    const { client, close } = await connectClient(name, 'Redis', { url: server.url });
    try {
      const { lines, logger } = recorder();
      const limiter = createLimiter({
        store: new RedisStore({ client, logger }),
        policies: { limit: 5, window: '1h' },
      });
      await limiter.consume('a');
      await limiter.consume('b');
      for (const deadline = Date.now() + 5_000; lines.length === 0 && Date.now() < deadline; ) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(lines).toEqual([expect.stringMatching(/^\[TOLLGATE_REDIS_EVICTION_POLICY\] .*allkeys-lru/)]);
    } finally {
      await close();
      await server.stop();
    }
  });
});
