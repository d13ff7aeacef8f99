/**
 * One of several processes racing on one key: waits for "go" on stdin, fires its share of `consume`
 * calls at once, and prints how many were allowed.
 * argv: client target prefix calls [algorithm]
 * - client: `ioredis` (auto-pipelining, as the READMEs recommend), `ioredis-plain` (without, as ioredis
 *   defaults), `node-redis-4` or `node-redis-5`
 * - target: a Redis URL, or `cluster:` and a JSON list of `{ host, port }` nodes
 * - algorithm: the policy's, `token-bucket` by default
 */
import { type AlgorithmName, createLimiter, RedisStore } from '@tollgate/core';
import { Cluster, Redis } from 'ioredis';
import { createClient as createClient4, createCluster as createCluster4 } from 'redis4';
import { createClient as createClient5, createCluster as createCluster5 } from 'redis5';

const [client = '', target = '', prefix = '', calls = '0', algorithm = 'token-bucket'] =
  process.argv.slice(2);
const nodes = target.startsWith('cluster:')
  ? (JSON.parse(target.slice('cluster:'.length)) as { host: string; port: number }[])
  : undefined;

/** A connected client of the kind asked for, with the fail-fast options the READMEs recommend. */
async function connect() {
  if (client === 'ioredis' || client === 'ioredis-plain') {
    const failFast = { enableAutoPipelining: client === 'ioredis', enableOfflineQueue: false } as const;
    const redis = nodes
      ? new Cluster(nodes, { ...failFast, redisOptions: { maxRetriesPerRequest: 0 } })
      : new Redis(target, { ...failFast, maxRetriesPerRequest: 0 });
    await new Promise((resolve) => redis.once('ready', resolve));
    return { redis, close: async () => redis.disconnect() };
  }
  const redis = nodeRedis(client === 'node-redis-4' ? 4 : 5);
  redis.on('error', (error: Error) => process.stderr.write(`${error.message}\n`));
  await redis.connect();
  return { redis, close: () => redis.disconnect() };
}

function nodeRedis(major: 4 | 5) {
  const rootNodes = nodes?.map(({ host, port }) => ({ url: `redis://${host}:${port}` })) ?? [];
  const defaults = { disableOfflineQueue: true };
  if (major === 4)
    return nodes ? createCluster4({ rootNodes, defaults }) : createClient4({ url: target, ...defaults });
  return nodes ? createCluster5({ rootNodes, defaults }) : createClient5({ url: target, ...defaults });
}

const { redis, close } = await connect(); // connected before the race starts
const limiter = createLimiter({
  store: new RedisStore({ client: redis, prefix }),
  policies: { limit: 100, window: '1h', algorithm: algorithm as AlgorithmName },
  onStoreError: 'throw', // a store error must fail the race, not be taken by the insurance limiter
});

process.stdout.write('ready\n');
process.stdin.once('data', async () => {
  const decisions = await Promise.all(
    Array.from({ length: Number(calls) }, () => limiter.consume('shared-key')),
  );
  process.stdout.write(`${JSON.stringify({ allowed: decisions.filter((d) => d.allowed).length })}\n`);
  await close();
  process.exit(0);
});
