/**
 * One of several processes reserving on one key: waits for "go" on stdin, fires its reservations at
 * once, settles each admitted one after a random pause at a random true cost (above or below what was
 * reserved), and prints how many were admitted and the sum of their true costs.
 * argv: client target prefix calls algorithm limit reserve seed nowMs
 * - client: `ioredis` (auto-pipelining) or `ioredis-plain`
 * - target: a Redis URL, or `cluster:` and a JSON list of `{ host, port }` nodes
 * - the policy is `limit` per minute on the key `shared-key` of the limiter `metered`
 * - nowMs: the store's clock, standing still (the same instant in every process): no bucket refills
 *   during the race, so what the buckets hold afterwards is what was charged.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type AlgorithmName, createLimiter, RedisStore } from '@tollgate/core';
import { Cluster, Redis } from 'ioredis';
import { seeded } from '../harness/seeded.js';

const [client = '', target = '', prefix = '', calls = '0', algorithm = '', limit = '0', reserve = '0'] =
  process.argv.slice(2);
const random = seeded(Number(process.argv[9] ?? 1));
const nowMs = Number(process.argv[10]);

const nodes = target.startsWith('cluster:')
  ? (JSON.parse(target.slice('cluster:'.length)) as { host: string; port: number }[])
  : undefined;
const failFast = { enableAutoPipelining: client === 'ioredis', enableOfflineQueue: false } as const;
const redis = nodes
  ? new Cluster(nodes, { ...failFast, redisOptions: { maxRetriesPerRequest: 0 } })
  : new Redis(target, { ...failFast, maxRetriesPerRequest: 0 });
await new Promise((resolve) => redis.once('ready', resolve));
const limiter = createLimiter({
  store: new RedisStore({ client: redis, prefix, clock: () => nowMs }),
  policies: { limit: Number(limit), window: '1m', algorithm: algorithm as AlgorithmName },
  namespace: 'metered',
  onStoreError: 'throw', // a store error must fail the race, not be taken by the insurance limiter
});
const reserved = Number(reserve);

async function one(): Promise<number | undefined> {
  const reservation = await limiter.reserve('shared-key', reserved);
  if (!reservation.decision.allowed) return undefined;
  await sleep(Math.floor(random() * 20)); // settles interleave with other processes' reservations
  const actual = Math.floor(random() * (2 * reserved + 1)); // 0 to twice the reservation
  await reservation.settle(actual); // rejects, failing the race, if the store fails
  return actual;
}

process.stdout.write('ready\n');
await new Promise((resolve) => process.stdin.once('data', resolve));
const actuals = (await Promise.all(Array.from({ length: Number(calls) }, one))).filter(
  (actual): actual is number => actual !== undefined,
);
const total = actuals.reduce((sum, actual) => sum + actual, 0);
process.stdout.write(`${JSON.stringify({ admitted: actuals.length, total })}\n`);
redis.disconnect();
process.exit(0);
