/** Quickstart: two policies charged together, on Redis when REDIS_URL is set, else in memory. */
import { createLimiter, MemoryStore, RedisStore } from '@tollgate/core';
import { Redis } from 'ioredis';

const redis = process.env.REDIS_URL
  ? new Redis(process.env.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 0 })
  : undefined;
const store = redis ? new RedisStore({ client: redis }) : new MemoryStore();

const limiter = createLimiter({
  store,
  policies: [
    { limit: 5, window: '1s', name: 'burst' },
    { limit: 100, window: '1h', name: 'hourly' },
  ],
  namespace: 'quickstart',
});

console.log(`store: ${redis ? `Redis at ${process.env.REDIS_URL}` : 'memory'}; policies: 5/s and 100/h`);
await limiter.reset('client-42');
for (let i = 1; i <= 7; i++) {
  const d = await limiter.consume('client-42');
  const left = d.policies.map((p) => `${p.policy}=${p.remaining}`).join(' ');
  const verdict = d.allowed ? 'allowed' : `denied by ${d.decidedBy.policy}, retry in ${d.retryAfterMs} ms`;
  console.log(`request ${i}: ${verdict.padEnd(38)} remaining ${left}`);
}
redis?.disconnect();
