/**
 * Concurrency limits across processes: never one lease more than the limit, whether holders keep them,
 * release them, or crash while holding them.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createConcurrencyLimiter, RedisStore } from '@tollgate/core';
import { describe, expect, inject, it } from 'vitest';
import { connectRedis, uniquePrefix } from '../harness/clients.js';
import type { WorkerClient } from './worker-clients.js';

const WORKER = fileURLToPath(new URL('./lease-worker.ts', import.meta.url));

interface Worker {
  readonly child: ChildProcess;
  /** The worker's one line of JSON. */
  readonly result: Promise<Record<string, number>>;
  go(): void;
}

async function startWorker(
  mode: string,
  target: string,
  prefix: string,
  calls: number,
  limit: number,
  ttlMs = 60_000,
  client: WorkerClient = 'ioredis-plain',
): Promise<Worker> {
  const args = [WORKER, mode, target, prefix, String(calls), String(limit), String(ttlMs), client];
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  let output = '';
  const lines = new Promise<Record<string, number>>((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      const line = output.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line));
    });
    child.once('exit', (code) => reject(new Error(`lease worker exited with ${code} before answering`)));
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', () => output.includes('ready\n') && resolve());
    child.once('exit', (code) => reject(new Error(`lease worker exited early with ${code}`)));
  });
  return { child, result: lines, go: () => child.stdin?.write('go\n') };
}

const TARGETS = [
  ['Redis', () => inject('redisUrl')],
  ['Redis Cluster', () => `cluster:${JSON.stringify(inject('redisClusterNodes'))}`],
] as const;

describe.each(TARGETS)('leases on %s', (_name, target) => {
  it('4 processes × 500 concurrent acquires of a limit of 10 hold exactly 10', async () => {
    const prefix = uniquePrefix('leases-hold');
    const workers = await Promise.all(
      Array.from({ length: 4 }, () => startWorker('hold', target(), prefix, 500, 10)),
    );
    for (const worker of workers) worker.go();
    const acquired = await Promise.all(workers.map(async (w) => (await w.result).acquired ?? 0));
    expect(acquired.reduce((sum, n) => sum + n, 0)).toBe(10);
  }, 60_000);

  it('4 processes acquiring and releasing never hold more than the limit at once', async () => {
    const prefix = uniquePrefix('leases-churn');
    const workers = await Promise.all(
      Array.from({ length: 4 }, () => startWorker('churn', target(), prefix, 150, 3)),
    );
    for (const worker of workers) worker.go();
    const most = await Promise.all(workers.map(async (w) => (await w.result).most ?? 0));
    expect(Math.max(...most)).toBeLessThanOrEqual(3);
    expect(Math.max(...most)).toBeGreaterThanOrEqual(2); // they did overlap
  }, 60_000);
});

/** One process of each client added after ioredis: their leases live in the same sorted set. */
const MIXED: readonly WorkerClient[] = ['iovalkey', 'node-redis-6', 'valkey-glide', 'ioredis'];

describe.each(TARGETS)(
  'leases on %s through iovalkey, node-redis 6, GLIDE and ioredis together',
  (_name, target) => {
    it('4 processes × 500 concurrent acquires of a limit of 10 hold exactly 10', async () => {
      const prefix = uniquePrefix('leases-hold-mixed');
      const workers = await Promise.all(
        MIXED.map((client) => startWorker('hold', target(), prefix, 500, 10, 60_000, client)),
      );
      for (const worker of workers) worker.go();
      const acquired = await Promise.all(workers.map(async (w) => (await w.result).acquired ?? 0));
      expect(acquired.reduce((sum, n) => sum + n, 0)).toBe(10);
    }, 60_000);

    it('4 processes acquiring and releasing never hold more than the limit at once', async () => {
      const prefix = uniquePrefix('leases-churn-mixed');
      const workers = await Promise.all(
        MIXED.map((client) => startWorker('churn', target(), prefix, 150, 3, 60_000, client)),
      );
      for (const worker of workers) worker.go();
      const most = await Promise.all(workers.map(async (w) => (await w.result).most ?? 0));
      expect(Math.max(...most)).toBeLessThanOrEqual(3);
      expect(Math.max(...most)).toBeGreaterThanOrEqual(2); // they did overlap
    }, 60_000);
  },
);

describe('a holder that crashes', () => {
  it('keeps its slots only until its leases expire', async () => {
    const prefix = uniquePrefix('leases-crash');
    const crashing = await startWorker('crash', inject('redisUrl'), prefix, 5, 2, 1_500);
    crashing.go();
    expect((await crashing.result).acquired).toBe(2);
    const heldSince = Date.now(); // a few ms after the leases were taken, for 1.5 s
    crashing.child.kill('SIGKILL');
    const client = await connectRedis();
    try {
      const store = new RedisStore({ client, prefix });
      const limiter = createConcurrencyLimiter({ store, limit: 2, leaseTtl: '1s', onStoreError: 'throw' });
      expect((await limiter.acquire('shared-key')).acquired).toBe(false); // the dead process holds both
      let acquired = false;
      while (!acquired && Date.now() - heldSince < 10_000) {
        acquired = (await limiter.acquire('shared-key')).acquired;
        if (!acquired) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(acquired).toBe(true);
      expect(Date.now() - heldSince).toBeGreaterThanOrEqual(1_300); // not before the leases ran out
    } finally {
      client.disconnect();
    }
  }, 30_000);
});
