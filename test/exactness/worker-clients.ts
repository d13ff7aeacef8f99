/**
 * The clients a worker process of the exactness tests races with, by name, connected with the options
 * the READMEs recommend. Workers run outside Vitest, so they cannot use the harness (it reads `inject`).
 * - `ioredis` (auto-pipelining, as the READMEs recommend), `ioredis-plain` (without, as ioredis defaults)
 * - `ioredis-5` (ioredis 5, auto-pipelining)
 * - `iovalkey` (auto-pipelining)
 * - `node-redis-4`, `node-redis-5`, `node-redis-6` (RESP3 and its 5 s command timeout: its defaults)
 * - `valkey-glide` (`requestTimeout` equal to the limiters' timeout, 1 s)
 * A target is a Redis URL, or `cluster:` and a JSON list of `{ host, port }` nodes.
 *
 * Each library is loaded only by the worker that races with it: loading them all took a worker about a
 * second longer to start, and the exactness tests start a hundred workers or more.
 */
import type { RedisClientLike } from '@tollgate/core';

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
    // iovalkey and ioredis 5 have ioredis's API: typed as ioredis's.
    const { Cluster, Redis } = (await (name === 'iovalkey'
      ? import('iovalkey')
      : name === 'ioredis-5'
        ? import('ioredis5')
        : import('ioredis'))) as typeof import('ioredis');
    const client = nodes ? new Cluster(nodes, clusterOptions) : new Redis(target, redisOptions);
    await new Promise((resolve) => client.once('ready', resolve));
    return { client, close: async () => client.disconnect() };
  }
  if (name === 'valkey-glide') {
    const { GlideClient, GlideClusterClient, Logger } = await import('@valkey/valkey-glide');
    Logger.setLoggerConfig('off'); // GLIDE logs every error reply, NOSCRIPT included, to stdout
    const options = { requestTimeout: 1_000 };
    const client = nodes
      ? await GlideClusterClient.createClient({ addresses: nodes, ...options })
      : await GlideClient.createClient({ addresses: [hostAndPort(target)], ...options });
    return { client, close: async () => client.close() };
  }
  const client = await nodeRedis(name, target, nodes);
  client.on('error', (error: Error) => process.stderr.write(`${error.message}\n`));
  await client.connect();
  return { client, close: () => client.disconnect() };
}

async function nodeRedis(name: string, url: string, nodes: Nodes | undefined) {
  const rootNodes = nodes?.map(({ host, port }) => ({ url: `redis://${host}:${port}` })) ?? [];
  const defaults = { disableOfflineQueue: true };
  switch (name) {
    case 'node-redis-4': {
      const { createClient, createCluster } = await import('redis4');
      return nodes ? createCluster({ rootNodes, defaults }) : createClient({ url, ...defaults });
    }
    case 'node-redis-5': {
      const { createClient, createCluster } = await import('redis5');
      return nodes ? createCluster({ rootNodes, defaults }) : createClient({ url, ...defaults });
    }
    case 'node-redis-6': {
      const { createClient, createCluster } = await import('redis6');
      return nodes ? createCluster({ rootNodes, defaults }) : createClient({ url, ...defaults });
    }
    default:
      throw new Error(`no worker client named ${name}`);
  }
}

function hostAndPort(url: string): { host: string; port: number } {
  const { hostname, port } = new URL(url);
  return { host: hostname, port: Number(port) };
}
