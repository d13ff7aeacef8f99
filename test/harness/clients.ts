/** Redis clients for tests (ioredis, node-redis 4 and 5), connected to the servers the global setup started. */
import type { NodeRedisClientLike, NodeRedisClusterLike } from '@tollgate/core';
import { Cluster, Redis } from 'ioredis';
import { createClient as createClient4, createCluster as createCluster4 } from 'redis4';
import { createClient as createClient5, createCluster as createCluster5 } from 'redis5';
import { inject } from 'vitest';

/**
 * The client options the READMEs recommend: fail fast (no offline queue, no resending after a reconnect)
 * and auto-pipelining, as production setups use it.
 */
export const FAIL_FAST = {
  enableAutoPipelining: true,
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
} as const;

/** A client of the test Redis, connected and ready. */
export async function connectRedis(url = inject('redisUrl')): Promise<Redis> {
  const client = new Redis(url, FAIL_FAST);
  client.on('error', () => {}); // tests stop servers on purpose; the store reports what matters
  await untilReady(client);
  return client;
}

/** A client of the test Redis Cluster, connected and ready. */
export async function connectCluster(): Promise<Cluster> {
  const client = new Cluster(inject('redisClusterNodes'), {
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    redisOptions: { maxRetriesPerRequest: 0 },
  });
  client.on('error', () => {});
  await untilReady(client);
  return client;
}

/** Resolves once the client is ready to send commands. */
export async function untilReady(client: Redis | Cluster): Promise<void> {
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
}

/** A prefix no other test uses, so tests can share one Redis and run in parallel. */
export function uniquePrefix(name: string): string {
  return `test:${name}:${process.pid}:${Math.random().toString(36).slice(2, 10)}:`;
}

/** The node-redis majors under test, installed as `redis4` and `redis5`. */
export const NODE_REDIS_MAJORS = [4, 5] as const;
export type NodeRedisMajor = (typeof NODE_REDIS_MAJORS)[number];

/** A connected node-redis client or cluster of either major, as the store sees it, and how to close it. */
export type NodeRedisConnection<Like> = Like & { disconnect(): Promise<void> };

/**
 * A node-redis client of the test Redis, connected and ready, with the options the core README
 * recommends: no offline queue, and an 'error' listener (node-redis throws errors nobody listens to).
 */
export async function connectNodeRedis(
  major: NodeRedisMajor,
  url = inject('redisUrl'),
): Promise<NodeRedisConnection<NodeRedisClientLike>> {
  const options = { url, disableOfflineQueue: true };
  const client = major === 4 ? createClient4(options) : createClient5(options);
  client.on('error', () => {});
  await client.connect();
  return client;
}

/** A node-redis cluster of the test Redis Cluster, connected, every master ready. */
export async function connectNodeRedisCluster(
  major: NodeRedisMajor,
  nodes = inject('redisClusterNodes'),
): Promise<NodeRedisConnection<NodeRedisClusterLike>> {
  const options = {
    rootNodes: nodes.map(({ host, port }) => ({ url: `redis://${host}:${port}` })),
    defaults: { disableOfflineQueue: true },
  };
  const cluster = major === 4 ? createCluster4(options) : createCluster5(options);
  cluster.on('error', () => {});
  await cluster.connect();
  return cluster;
}
