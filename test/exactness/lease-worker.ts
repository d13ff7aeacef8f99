/**
 * One of several processes taking leases on one key: waits for "go" on stdin, then
 * - `hold`: fires its share of acquires at once and keeps what it gets (prints how many);
 * - `churn`: acquires, counts itself in a probe counter beside the limiter, works a moment, leaves the
 *   counter, releases, again and again (prints the most holders the counter ever saw);
 * - `crash`: takes what it can, prints it, and waits to be killed with its leases held.
 * argv: mode target prefix calls limit ttlMs (target: a Redis URL, or `cluster:` and JSON nodes)
 */
import { createConcurrencyLimiter, RedisStore } from '@tollgate/core';
import { Cluster, Redis } from 'ioredis';

const [mode = '', target = '', prefix = '', calls = '0', limit = '0', ttlMs = '60000'] =
  process.argv.slice(2);
const nodes = target.startsWith('cluster:')
  ? (JSON.parse(target.slice('cluster:'.length)) as { host: string; port: number }[])
  : undefined;
const failFast = { enableOfflineQueue: false } as const;
const redis = nodes
  ? new Cluster(nodes, { ...failFast, redisOptions: { maxRetriesPerRequest: 0 } })
  : new Redis(target, { ...failFast, maxRetriesPerRequest: 0 });
await new Promise((resolve) => redis.once('ready', resolve));
const limiter = createConcurrencyLimiter({
  store: new RedisStore({ client: redis, prefix }),
  limit: Number(limit),
  leaseTtl: Number(ttlMs),
  onStoreError: 'throw', // a store error must fail the race, not be taken by the insurance limiter
});
const probe = `${prefix}{probe}`;

async function churn(): Promise<number> {
  let most = 0;
  for (let i = 0; i < Number(calls); i++) {
    const { lease } = await limiter.acquire('shared-key');
    if (lease === undefined) continue;
    most = Math.max(most, await redis.incr(probe));
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
    await redis.decr(probe);
    await lease.release();
  }
  return most;
}

process.stdout.write('ready\n');
process.stdin.once('data', async () => {
  if (mode === 'churn') {
    process.stdout.write(`${JSON.stringify({ most: await churn() })}\n`);
  } else {
    const decisions = await Promise.all(
      Array.from({ length: Number(calls) }, () => limiter.acquire('shared-key')),
    );
    process.stdout.write(`${JSON.stringify({ acquired: decisions.filter((d) => d.acquired).length })}\n`);
    if (mode === 'crash') return; // hold on, until killed
  }
  redis.disconnect();
  process.exit(0);
});
