/**
 * `pnpm bench`: throughput of checks, measured side by side in one run and printed as ratios to the first
 * row. Numbers vary by machine; the ratios are what to compare. Uses REDIS_URL, else starts its own Redis.
 */
import { createLimiter, type Limiter, MemoryStore, type Policy, RedisStore } from '@tollgate/core';
import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { startRedisServer } from '../harness/redis-server.js';

const CHECKS = 20_000;
const ONE_POLICY: Policy = { limit: 1_000_000_000, window: '1h' };
const TWO_POLICIES: Policy[] = [
  { limit: 1_000_000, window: '1s', name: 'burst' },
  { limit: 1_000_000_000, window: '1h', name: 'hourly' },
];

interface Row {
  readonly name: string;
  run(): Promise<number>; // checks per second
}

/** Runs `check` CHECKS times with `concurrency` in flight; returns checks per second. */
async function throughput(concurrency: number, check: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < CHECKS) await check(next++ % 1000);
    }),
  );
  return CHECKS / (Number(process.hrtime.bigint() - started) / 1e9);
}

const byKey = (limiter: Limiter) => (i: number) => limiter.consume(`client-${i}`);

async function main(): Promise<void> {
  const ownRedis = process.env.REDIS_URL ? undefined : await startRedisServer();
  const url = process.env.REDIS_URL ?? (ownRedis?.url as string);
  const pipelined = new Redis(url, { enableAutoPipelining: true });
  const plain = new Redis(url);
  const prefix = `bench:${Date.now()}:`;
  const redisLimiter = (client: Redis, policies: Policy | Policy[]) =>
    createLimiter({ store: new RedisStore({ client, prefix }), policies });
  const flexible = (client: Redis) =>
    new RateLimiterRedis({
      storeClient: client,
      points: 1_000_000_000,
      duration: 3600,
      keyPrefix: `${prefix}rlf`,
    });
  const byFlexible = (client: Redis) => {
    const limiter = flexible(client);
    return (i: number) => limiter.consume(`client-${i}`);
  };

  const rows: Row[] = [
    {
      name: 'Tollgate RedisStore, 100 in flight, auto-pipelining',
      run: () => throughput(100, byKey(redisLimiter(pipelined, ONE_POLICY))),
    },
    {
      name: 'Tollgate RedisStore, 100 in flight, no pipelining',
      run: () => throughput(100, byKey(redisLimiter(plain, ONE_POLICY))),
    },
    {
      name: 'Tollgate RedisStore, 1 in flight',
      run: () => throughput(1, byKey(redisLimiter(pipelined, ONE_POLICY))),
    },
    {
      name: 'Tollgate RedisStore, 2 policies, 100 in flight',
      run: () => throughput(100, byKey(redisLimiter(pipelined, TWO_POLICIES))),
    },
    {
      name: 'rate-limiter-flexible (fixed window), 100 in flight, auto-pipelining',
      run: () => throughput(100, byFlexible(pipelined)),
    },
    {
      name: 'rate-limiter-flexible (fixed window), 100 in flight, no pipelining',
      run: () => throughput(100, byFlexible(plain)),
    },
    {
      name: 'Tollgate MemoryStore, 100 in flight',
      run: () => throughput(100, byKey(createLimiter({ store: new MemoryStore(), policies: ONE_POLICY }))),
    },
  ];
  try {
    for (const row of rows) await row.run(); // warm-up: scripts loaded, JIT settled
    const results = [];
    for (const row of rows) results.push({ name: row.name, perSecond: await row.run() });
    const reference = results[0]?.perSecond ?? 1;
    console.log(`${CHECKS} checks per row; ratio to the first row (higher is faster)\n`);
    for (const { name, perSecond } of results)
      console.log(`${(perSecond / reference).toFixed(2).padStart(7)}×  ${name}`);
  } finally {
    pipelined.disconnect();
    plain.disconnect();
    await ownRedis?.stop();
  }
}

await main();
