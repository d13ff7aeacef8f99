/**
 * Reserve, then settle, exact across processes: four processes reserve on one key at once and settle
 * each admitted reservation at a random true cost, above or below what was reserved. Afterwards the key's
 * buckets hold exactly the sum of the true costs, on one Redis and on a Redis Cluster: every settle
 * charged or gave back its difference in one atomic step, and no refused reservation charged anything.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { type AlgorithmName, createLimiter, RedisStore } from '@tollgate/core';
import type { Cluster, Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { connectCluster, connectRedis, uniquePrefix } from '../harness/clients.js';

const WORKER = fileURLToPath(new URL('./reserve-worker.ts', import.meta.url));
/** The instant every process's store decides at: no refill, so the buckets show what was charged. */
const FROZEN_MS = 1_767_225_600_000;

interface Race {
  readonly algorithm: AlgorithmName;
  /** Tokens per minute: with a token bucket, one a millisecond, so a wait in ms is a count of tokens. */
  readonly limit: number;
  readonly reserve: number;
  readonly calls: number;
}

/** What a worker reports: the reservations admitted, and the sum of their true costs. */
interface WorkerResult {
  readonly admitted: number;
  readonly total: number;
}

async function startWorker(client: string, target: string, prefix: string, race: Race, seed: number) {
  const { algorithm, limit, reserve, calls } = race;
  const argv = [WORKER, client, target, prefix, calls, algorithm, limit, reserve, seed, FROZEN_MS].map(
    String,
  );
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', ...argv], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', () => output.includes('ready\n') && resolve());
    child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
  });
  const result = once(child, 'exit').then(([code]): WorkerResult => {
    if (code !== 0) throw new Error(`worker exited with ${code}`);
    return JSON.parse(output.split('\n').find((line) => line.startsWith('{')) ?? '{}') as WorkerResult;
  });
  return { child, result };
}

/** Four processes race; returns what they admitted and the sum of the true costs they settled at. */
async function raceAcrossProcesses(target: string, prefix: string, race: Race): Promise<WorkerResult> {
  const clients = ['ioredis', 'ioredis-plain', 'ioredis', 'ioredis-plain'];
  const seed = Date.now() % 1_000_000;
  const workers = await Promise.all(
    clients.map((client, i) => startWorker(client, target, prefix, race, seed + i)),
  );
  for (const { child } of workers) child.stdin?.write('go\n');
  const results = await Promise.all(workers.map((worker) => worker.result));
  const summed = results.reduce((sum, r) => ({
    admitted: sum.admitted + r.admitted,
    total: sum.total + r.total,
  }));
  return summed;
}

/** The tokens charged to the key so far, read from its bucket by a limiter of the same policy. */
async function charged(client: Redis | Cluster, prefix: string, race: Race): Promise<number> {
  const limiter = createLimiter({
    store: new RedisStore({ client, prefix, clock: () => FROZEN_MS }),
    policies: { limit: race.limit, window: '1m', algorithm: race.algorithm },
    namespace: 'metered',
    denyCache: false,
  });
  if (race.algorithm === 'token-bucket') {
    // At one token a millisecond, the wait for a full bucket is the tokens missing from it, owed ones
    // included: the one reading that sees below zero.
    return (await limiter.peek('shared-key', { cost: race.limit })).retryAfterMs as number;
  }
  return race.limit - (await limiter.peek('shared-key')).decidedBy.remaining;
}

/**
 * A token bucket smaller than what is reserved, so some reservations are refused and settles above the
 * reservation can leave it owing; a fixed window larger than every true cost together, so its count
 * is read from `remaining`.
 */
const RACES: readonly Race[] = [
  { algorithm: 'token-bucket', limit: 60_000, reserve: 500, calls: 100 },
  { algorithm: 'fixed-window', limit: 1_000_000, reserve: 500, calls: 100 },
];

const TARGETS = [
  { name: 'one Redis', target: () => inject('redisUrl'), connect: () => connectRedis() },
  {
    name: 'a Redis Cluster',
    target: () => `cluster:${JSON.stringify(inject('redisClusterNodes'))}`,
    connect: () => connectCluster(),
  },
] as const;

describe.each(TARGETS)('reserve and settle across 4 processes on $name', ({ target, connect }) => {
  it.each(RACES)(
    '$algorithm: the buckets hold exactly the sum of the true costs',
    async (race) => {
      const prefix = uniquePrefix('reserve-settle');
      const { admitted, total } = await raceAcrossProcesses(target(), prefix, race);
      expect(admitted).toBeGreaterThan(0);
      if (race.algorithm === 'token-bucket') expect(admitted).toBeLessThan(4 * race.calls); // some refused
      const client = await connect();
      try {
        expect(await charged(client, prefix, race)).toBe(total);
      } finally {
        client.disconnect();
      }
    },
    60_000,
  );
});
