/**
 * Redis clients for tests (ioredis 6 and 5, iovalkey, node-redis 4 to 6, Valkey GLIDE), connected to the
 * servers the global setup started.
 */
import type { NodeRedisClientLike, NodeRedisClusterLike, RedisClientLike } from '@tollgate/core';
import type { GlideClient, GlideClusterClient } from '@valkey/valkey-glide';
import { Cluster, Redis } from 'ioredis';
import { Cluster as Cluster5, Redis as Redis5 } from 'ioredis5';
import { Redis as Valkey, Cluster as ValkeyCluster } from 'iovalkey';
import { createClient as createClient4, createCluster as createCluster4 } from 'redis4';
import { createClient as createClient5, createCluster as createCluster5 } from 'redis5';
import { createClient as createClient6, createCluster as createCluster6 } from 'redis6';
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
export async function connectCluster(nodes = inject('redisClusterNodes')): Promise<Cluster> {
  const client = new Cluster(nodes, {
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

/**
 * The node-redis majors `redis/node-redis.test.ts` runs, installed as `redis4` and `redis5`. node-redis 6
 * (`redis6`) runs in the client table below ({@link CLIENT_NAMES}) with every other library.
 */
export const NODE_REDIS_MAJORS = [4, 5] as const;
export type NodeRedisMajor = (typeof NODE_REDIS_MAJORS)[number];
/** Every node-redis major installed: `redis4`, `redis5`, `redis6`. */
export type NodeRedisVersion = NodeRedisMajor | 6;

/** A connected node-redis client or cluster of either major, as the store sees it, and how to close it. */
export type NodeRedisConnection<Like> = Like & { disconnect(): Promise<void> };

/**
 * A node-redis client of the test Redis, connected and ready, with the options the core README
 * recommends: no offline queue, and an 'error' listener (node-redis throws errors nobody listens to).
 */
export async function connectNodeRedis(
  major: NodeRedisVersion,
  url = inject('redisUrl'),
): Promise<NodeRedisConnection<NodeRedisClientLike>> {
  const client = createNodeRedis(major, { url, disableOfflineQueue: true });
  await client.connect();
  return client;
}

/**
 * A node-redis client of `major`, not connected, with an 'error' listener. node-redis 6 runs with its own
 * defaults: RESP3 and a 5 s per-command timeout.
 */
export function createNodeRedis(
  major: NodeRedisVersion,
  options: { url: string; disableOfflineQueue?: boolean },
) {
  const client =
    major === 4 ? createClient4(options) : major === 5 ? createClient5(options) : createClient6(options);
  client.on('error', () => {});
  return client;
}

/** A node-redis cluster of the test Redis Cluster, connected, every master ready. */
export async function connectNodeRedisCluster(
  major: NodeRedisVersion,
  nodes = inject('redisClusterNodes'),
): Promise<NodeRedisConnection<NodeRedisClusterLike>> {
  const options = {
    rootNodes: nodes.map(({ host, port }) => ({ url: `redis://${host}:${port}` })),
    defaults: { disableOfflineQueue: true },
  };
  const cluster =
    major === 4 ? createCluster4(options) : major === 5 ? createCluster5(options) : createCluster6(options);
  cluster.on('error', () => {});
  await cluster.connect();
  return cluster;
}

/** An ioredis 5 client of the test Redis with the options the READMEs recommend, ready. */
async function connectIoredis5(url: string): Promise<Redis5> {
  const client = new Redis5(url, FAIL_FAST);
  client.on('error', () => {});
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
  return client;
}

/** An ioredis 5 client of the test Redis Cluster, ready. */
async function connectIoredis5Cluster(nodes: { host: string; port: number }[]): Promise<Cluster5> {
  const client = new Cluster5(nodes, {
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    redisOptions: { maxRetriesPerRequest: 0 },
  });
  client.on('error', () => {});
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
  return client;
}

/** An iovalkey client of the test Redis with the ioredis options the READMEs recommend, ready. */
export async function connectIovalkey(url = inject('redisUrl')): Promise<Valkey> {
  const client = new Valkey(url, FAIL_FAST);
  client.on('error', () => {});
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
  return client;
}

/** An iovalkey client of the test Redis Cluster, ready. */
export async function connectIovalkeyCluster(nodes = inject('redisClusterNodes')): Promise<ValkeyCluster> {
  const client = new ValkeyCluster(nodes, {
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    redisOptions: { maxRetriesPerRequest: 0 },
  });
  client.on('error', () => {});
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
  return client;
}

/**
 * GLIDE's options as the core README recommends them: `requestTimeout` (GLIDE's default: 250 ms) equal to
 * the limiters' `timeout` (default 1 s). Shorter, GLIDE gives up on a script Redis may still run before
 * the store's deadline; longer, GLIDE holds checks while it reconnects and sends them after the store
 * gave up (their deadline has passed, so they change nothing, but they reach Redis). Tests with another
 * timeout pass their own.
 */
export const GLIDE_OPTIONS = { requestTimeout: 1_000 } as const;

/** A GLIDE client of the test Redis, connected (GLIDE connects in `createClient`). */
export async function connectGlide(
  url = inject('redisUrl'),
  options: { requestTimeout: number } = GLIDE_OPTIONS,
): Promise<GlideClient> {
  const { hostname, port } = new URL(url);
  const { GlideClient } = await glide();
  return GlideClient.createClient({ addresses: [{ host: hostname, port: Number(port) }], ...options });
}

/** A GLIDE cluster client of the test Redis Cluster, connected to every primary. */
export async function connectGlideCluster(nodes = inject('redisClusterNodes')): Promise<GlideClusterClient> {
  const { GlideClusterClient } = await glide();
  return GlideClusterClient.createClient({ addresses: [...nodes], ...GLIDE_OPTIONS });
}

let glideModule: Promise<typeof import('@valkey/valkey-glide')> | undefined;

/** GLIDE, loaded when a test first needs it: its native core is left out of the files that do not. */
function glide(): Promise<typeof import('@valkey/valkey-glide')> {
  glideModule ??= import('@valkey/valkey-glide').then((module) => {
    module.Logger.setLoggerConfig('off'); // it logs every error reply, NOSCRIPT included, to stdout
    return module;
  });
  return glideModule;
}

/** Every client library the store takes, by the names the tables use. */
export const CLIENT_NAMES = [
  'ioredis',
  'ioredis 5',
  'iovalkey',
  'node-redis 4',
  'node-redis 5',
  'node-redis 6',
  'valkey-glide',
] as const;
export type ClientName = (typeof CLIENT_NAMES)[number];

/** A connected client of any library, as the store takes it, and how to close it. */
export interface ClientConnection {
  readonly client: RedisClientLike;
  close(): Promise<void>;
}

/**
 * A client of library `name` of the test Redis (`url`) or Cluster (`nodes`), connected and ready, made
 * with the options the READMEs recommend for it.
 */
export async function connectClient(
  name: ClientName,
  topology: 'Redis' | 'Cluster',
  { url = inject('redisUrl'), nodes = inject('redisClusterNodes') } = {},
): Promise<ClientConnection> {
  const cluster = topology === 'Cluster';
  switch (name) {
    case 'ioredis':
    case 'iovalkey': {
      const ioredis = name === 'ioredis';
      const client = cluster
        ? await (ioredis ? connectCluster(nodes) : connectIovalkeyCluster(nodes))
        : await (ioredis ? connectRedis(url) : connectIovalkey(url));
      return { client, close: async () => client.disconnect() };
    }
    case 'ioredis 5': {
      const client = cluster ? await connectIoredis5Cluster(nodes) : await connectIoredis5(url);
      return { client, close: async () => client.disconnect() };
    }
    case 'valkey-glide': {
      const client = cluster ? await connectGlideCluster(nodes) : await connectGlide(url);
      return { client, close: async () => client.close() };
    }
    default: {
      const major = Number(name.slice('node-redis '.length)) as NodeRedisVersion;
      const client = cluster
        ? await connectNodeRedisCluster(major, nodes)
        : await connectNodeRedis(major, url);
      return { client, close: () => client.disconnect() };
    }
  }
}
