/**
 * One of several processes taking leases on one key: waits for "go" on stdin, then
 * - `hold`: fires its share of acquires at once and keeps what it gets (prints how many);
 * - `churn`: acquires, counts itself in a probe counter beside the limiter, works a moment, leaves the
 *   counter, releases, again and again (prints the most holders the counter ever saw);
 * - `crash`: takes what it can, prints it, and waits to be killed with its leases held.
 * argv: mode target prefix calls limit ttlMs [client] (target and client: see `worker-clients.ts`; the
 * client is `ioredis-plain` by default). The probe counter goes through a plain ioredis client of its own.
 */
import { createConcurrencyLimiter, RedisStore } from '@tollgate/core';
import type { Cluster, Redis } from 'ioredis';
import { connectWorkerClient } from './worker-clients.js';

const [mode = '', target = '', prefix = '', calls = '0', limit = '0', ttlMs = '60000', clientName] =
  process.argv.slice(2);
const { client, close } = await connectWorkerClient(clientName ?? 'ioredis-plain', target);
const redis = (await connectWorkerClient('ioredis-plain', target)).client as Redis | Cluster; // the probe's
const limiter = createConcurrencyLimiter({
  store: new RedisStore({ client, prefix }),
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
  await close();
  process.exit(0);
});
