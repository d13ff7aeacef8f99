/**
 * One of several processes racing on one key: waits for "go" on stdin, fires its share of `consume`
 * calls at once, and prints how many were allowed.
 * argv: redisUrl prefix calls
 */
import { createLimiter, RedisStore } from '@tollgate/core';
import { Redis } from 'ioredis';

const [redisUrl = '', prefix = '', calls = '0'] = process.argv.slice(2);
const client = new Redis(redisUrl, {
  enableAutoPipelining: true,
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
});
const limiter = createLimiter({
  store: new RedisStore({ client, prefix }),
  policies: { limit: 100, window: '1h' },
});

await new Promise((resolve) => client.once('ready', resolve)); // connected before the race starts
process.stdout.write('ready\n');
process.stdin.once('data', async () => {
  const decisions = await Promise.all(
    Array.from({ length: Number(calls) }, () => limiter.consume('shared-key')),
  );
  process.stdout.write(`${JSON.stringify({ allowed: decisions.filter((d) => d.allowed).length })}\n`);
  client.disconnect();
  process.exit(0);
});
