/**
 * Exactness: many concurrent checks on one key admit exactly the limit, never one more — across
 * processes sharing one Redis or one Redis Cluster (through ioredis, iovalkey, node-redis 4 to 6 and
 * Valkey GLIDE), and in one process on the memory store; and exactly a key's override, set before.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { type AlgorithmName, createLimiter, MemoryStore, RedisStore, type Store } from '@tollgate/core';
import type { Cluster, Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { connectCluster, connectRedis, uniquePrefix } from '../harness/clients.js';
import type { WorkerClient } from './worker-clients.js';

const WORKER = fileURLToPath(new URL('./consume-worker.ts', import.meta.url));
const POLICY = { limit: 100, window: '1h' } as const;

async function startWorker(
  client: WorkerClient,
  target: string,
  prefix: string,
  calls: number,
  algorithm: AlgorithmName,
  overrides: boolean,
): Promise<{ child: ChildProcess; result: Promise<number> }> {
  const argv = [WORKER, client, target, prefix, String(calls), algorithm, overrides ? 'overrides' : ''];
  const child = spawn(process.execPath, ['--import', 'tsx', ...argv], { stdio: ['pipe', 'pipe', 'inherit'] });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', () => output.includes('ready\n') && resolve());
    child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
  });
  await ready;
  const result = once(child, 'exit').then(([code]) => {
    if (code !== 0) throw new Error(`worker exited with ${code}`);
    return (
      JSON.parse(output.split('\n').find((line) => line.startsWith('{')) ?? '{}') as { allowed: number }
    ).allowed;
  });
  return { child, result };
}

async function raceInProcess(store: Store, calls: number, algorithm: AlgorithmName = 'token-bucket') {
  const limiter = createLimiter({ store, policies: { ...POLICY, algorithm } });
  const decisions = await Promise.all(Array.from({ length: calls }, () => limiter.consume('shared-key')));
  return decisions.filter((d) => d.allowed).length;
}

/**
 * Four processes, each with its own client, fire 500 consumes each at one key at once; returns the
 * allowed. With `before`, their limiters read overrides, and `before` runs first, given the prefix.
 */
async function raceAcrossProcesses(
  clients: readonly WorkerClient[],
  target: string,
  algorithm: AlgorithmName = 'token-bucket',
  before?: (prefix: string) => Promise<void>,
): Promise<number> {
  const prefix = uniquePrefix('exactness');
  await before?.(prefix);
  const workers = await Promise.all(
    clients.map((client) => startWorker(client, target, prefix, 500, algorithm, before !== undefined)),
  );
  for (const { child } of workers) child.stdin?.write('go\n');
  const allowed = await Promise.all(workers.map((w) => w.result));
  return allowed.reduce((sum, n) => sum + n, 0);
}

/** ioredis with and without auto-pipelining: the store sends its scripts differently for each. */
const IOREDIS_WORKERS: readonly WorkerClient[] = ['ioredis', 'ioredis-plain', 'ioredis', 'ioredis-plain'];

const NODE_REDIS_WORKERS: readonly WorkerClient[] = [
  'node-redis-4',
  'node-redis-4',
  'node-redis-5',
  'node-redis-5',
];

/**
 * The clients added after ioredis and node-redis 4 and 5, one process each racing on one key: each client
 * is exact against the others, in one run (a run per client would cost the suite minutes, for no more).
 */
const NEWER_CLIENTS = [
  [
    'iovalkey, node-redis 6, GLIDE, ioredis 5 and ioredis 6 together',
    ['iovalkey', 'node-redis-6', 'valkey-glide', 'ioredis-5', 'ioredis'],
  ],
] as const satisfies readonly (readonly [string, readonly WorkerClient[]])[];

describe.each(NEWER_CLIENTS)('exactness on %s', (_name, clients) => {
  it('5 processes × 500 concurrent consumes on one Redis key admit exactly 100', async () => {
    expect(await raceAcrossProcesses(clients, inject('redisUrl'))).toBe(100);
  }, 60_000);

  it('5 processes × 500 concurrent consumes on one Redis Cluster key admit exactly 100', async () => {
    const cluster = `cluster:${JSON.stringify(inject('redisClusterNodes'))}`;
    expect(await raceAcrossProcesses(clients, cluster)).toBe(100);
  }, 60_000);
});

/** Sets the shared key's limit to 37, as another app server would, before the race. */
function overrideTo37(client: () => Promise<Redis | Cluster>, algorithm: AlgorithmName) {
  return async (prefix: string) => {
    const redis = await client();
    try {
      const store = new RedisStore({ client: redis, prefix });
      const limiter = createLimiter({ store, policies: { ...POLICY, algorithm }, overrides: true });
      await limiter.setOverride('shared-key', 37);
    } finally {
      redis.disconnect();
    }
  };
}

describe.each(['token-bucket', 'fixed-window', 'sliding-window'] as const)(
  'exactness of an override of the %s',
  (algorithm) => {
    it('4 processes on four clients × 500 concurrent consumes on one Redis key admit exactly the override’s 37', async () => {
      const clients = NEWER_CLIENTS[0][1];
      const before = overrideTo37(() => connectRedis(), algorithm);
      expect(await raceAcrossProcesses(clients, inject('redisUrl'), algorithm, before)).toBe(37);
    }, 60_000);

    it('4 processes × 500 concurrent consumes on one Redis Cluster key admit exactly the override’s 37', async () => {
      const cluster = `cluster:${JSON.stringify(inject('redisClusterNodes'))}`;
      const before = overrideTo37(() => connectCluster(), algorithm);
      expect(await raceAcrossProcesses(IOREDIS_WORKERS, cluster, algorithm, before)).toBe(37);
    }, 60_000);
  },
);

describe('exactness under concurrency', () => {
  it('4 processes × 500 concurrent consumes on one Redis key admit exactly 100', async () => {
    expect(await raceAcrossProcesses(IOREDIS_WORKERS, inject('redisUrl'))).toBe(100);
  }, 60_000);

  it('4 processes on node-redis 4 and 5 × 500 concurrent consumes on one Redis key admit exactly 100', async () => {
    expect(await raceAcrossProcesses(NODE_REDIS_WORKERS, inject('redisUrl'))).toBe(100);
  }, 60_000);

  it('4 processes on node-redis 4 and 5 × 500 concurrent consumes on one Redis Cluster key admit exactly 100', async () => {
    const cluster = `cluster:${JSON.stringify(inject('redisClusterNodes'))}`;
    expect(await raceAcrossProcesses(NODE_REDIS_WORKERS, cluster)).toBe(100);
  }, 60_000);

  it('2,000 concurrent consumes on a Redis Cluster admit exactly 100', async () => {
    const cluster = await connectCluster();
    try {
      const store = new RedisStore({ client: cluster, prefix: uniquePrefix('exactness-cluster') });
      expect(await raceInProcess(store, 2000)).toBe(100);
    } finally {
      cluster.disconnect();
    }
  });

  it('2,000 concurrent consumes on the memory store admit exactly 100', async () => {
    expect(await raceInProcess(new MemoryStore(), 2000)).toBe(100);
  });
});

describe.each(['fixed-window', 'sliding-window'] as const)('exactness of the %s', (algorithm) => {
  it('4 processes × 500 concurrent consumes on one Redis key admit exactly 100', async () => {
    expect(await raceAcrossProcesses(IOREDIS_WORKERS, inject('redisUrl'), algorithm)).toBe(100);
  }, 60_000);

  it('4 processes × 500 concurrent consumes on one Redis Cluster key admit exactly 100', async () => {
    const cluster = `cluster:${JSON.stringify(inject('redisClusterNodes'))}`;
    expect(await raceAcrossProcesses(IOREDIS_WORKERS, cluster, algorithm)).toBe(100);
  }, 60_000);

  it('2,000 concurrent consumes on the memory store admit exactly 100', async () => {
    expect(await raceInProcess(new MemoryStore(), 2000, algorithm)).toBe(100);
  });
});
