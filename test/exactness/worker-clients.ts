/**
 * The clients a worker process of the exactness tests races with, by name, connected with the options
 * the READMEs recommend. Workers run outside Vitest, so they cannot use the harness (it reads `inject`).
 * - `ioredis` (auto-pipelining, as the READMEs recommend), `ioredis-plain` (without, as ioredis defaults)
 * - `ioredis-5` (ioredis 5, auto-pipelining)
 * - `iovalkey` (auto-pipelining)
 * - `node-redis-4`, `node-redis-5`, `node-redis-6` (RESP3 and its 5 s command timeout: its defaults)
 * - `valkey-glide` (`requestTimeout` equal to the limiters' timeout, 1 s)
 * A target is a Redis URL, or `cluster:` and a JSON list of `{ host, port }` nodes.
 */
import type { RedisClientLike } from '@tollgate/core';
import { Cluster, Redis } from 'ioredis';
import { Cluster as Cluster5, Redis as Redis5 } from 'ioredis5';
import { Redis as Valkey, Cluster as ValkeyCluster } from 'iovalkey';
import { createClient as createClient4, createCluster as createCluster4 } from 'redis4';
import { createClient as createClient5, createCluster as createCluster5 } from 'redis5';
import { createClient as createClient6, createCluster as createCluster6 } from 'redis6';

/** The names a worker takes. */
export type WorkerClient =
  | 'ioredis'
  | 'ioredis-plain'
  | 'ioredis-5'
  | 'iovalkey'
  | 'node-redis-4'
  | 'node-redis-5'
  | 'node-redis-6'
  | 'valkey-glide';

type Nodes = { host: string; port: number }[];

/** A connected client of `name` (ready before it is returned), and how to close it. */
export async function connectWorkerClient(
  name: string,
  target: string,
): Promise<{ client: RedisClientLike; close(): Promise<void> }> {
  const nodes = target.startsWith('cluster:')
    ? (JSON.parse(target.slice('cluster:'.length)) as Nodes)
    : undefined;
  if (name === 'ioredis' || name === 'ioredis-plain' || name === 'ioredis-5' || name === 'iovalkey') {
    const failFast = { enableAutoPipelining: name !== 'ioredis-plain', enableOfflineQueue: false } as const;
    const clusterOptions = { ...failFast, redisOptions: { maxRetriesPerRequest: 0 } };
    const redisOptions = { ...failFast, maxRetriesPerRequest: 0 };
    const client =
      name === 'iovalkey'
        ? nodes
          ? new ValkeyCluster(nodes, clusterOptions)
          : new Valkey(target, redisOptions)
        : name === 'ioredis-5'
          ? nodes
            ? new Cluster5(nodes, clusterOptions)
            : new Redis5(target, redisOptions)
          : nodes
            ? new Cluster(nodes, clusterOptions)
            : new Redis(target, redisOptions);
    await new Promise((resolve) => (client as Redis).once('ready', resolve)); // iovalkey's classes are ioredis's
    return { client, close: async () => client.disconnect() };
  }
  if (name === 'valkey-glide') {
    // Loaded only here, so that the other workers do not load its native core.
    const { GlideClient, GlideClusterClient, Logger } = await import('@valkey/valkey-glide');
    Logger.setLoggerConfig('off'); // GLIDE logs every error reply, NOSCRIPT included, to stdout
    const options = { requestTimeout: 1_000 };
    const client = nodes
      ? await GlideClusterClient.createClient({ addresses: nodes, ...options })
      : await GlideClient.createClient({ addresses: [hostAndPort(target)], ...options });
    return { client, close: async () => client.close() };
  }
  const client = nodeRedis(name, target, nodes);
  client.on('error', (error: Error) => process.stderr.write(`${error.message}\n`));
  await client.connect();
  return { client, close: () => client.disconnect() };
}

function nodeRedis(name: string, url: string, nodes: Nodes | undefined) {
  const rootNodes = nodes?.map(({ host, port }) => ({ url: `redis://${host}:${port}` })) ?? [];
  const defaults = { disableOfflineQueue: true };
  switch (name) {
    case 'node-redis-4':
      return nodes ? createCluster4({ rootNodes, defaults }) : createClient4({ url, ...defaults });
    case 'node-redis-5':
      return nodes ? createCluster5({ rootNodes, defaults }) : createClient5({ url, ...defaults });
    case 'node-redis-6':
      return nodes ? createCluster6({ rootNodes, defaults }) : createClient6({ url, ...defaults });
    default:
      throw new Error(`no worker client named ${name}`);
  }
}

function hostAndPort(url: string): { host: string; port: number } {
  const { hostname, port } = new URL(url);
  return { host: hostname, port: Number(port) };
}
