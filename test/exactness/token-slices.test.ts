/**
 * Token slices across processes: 4 processes on one Redis, each checking one hot key through slices of
 * a fixed window. Without leftovers given back they admit exactly the limit; with slices that expire and
 * are given back into later windows, every window admits within `limit ± processes × (size − 1)`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { uniquePrefix } from '../harness/clients.js';
import type { SliceWorkerSettings } from './slice-worker.js';
import type { WorkerClient } from './worker-clients.js';

const WORKER = fileURLToPath(new URL('./slice-worker.ts', import.meta.url));
const PROCESSES = 4;

async function startWorker(
  client: WorkerClient,
  target: string,
  prefix: string,
  settings: SliceWorkerSettings,
): Promise<{ child: ChildProcess; result: Promise<Record<string, unknown>> }> {
  const argv = [WORKER, client, target, prefix, JSON.stringify(settings)];
  const child = spawn(process.execPath, ['--import', 'tsx', ...argv], { stdio: ['pipe', 'pipe', 'inherit'] });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', () => output.includes('ready\n') && resolve());
    child.once('exit', (code) => reject(new Error(`slice worker exited early with ${code}`)));
  });
  const result = once(child, 'exit').then(([code]) => {
    if (code !== 0) throw new Error(`slice worker exited with ${code}`);
    return JSON.parse(output.split('\n').find((line) => line.startsWith('{')) ?? '{}') as Record<
      string,
      unknown
    >;
  });
  return { child, result };
}

/** Starts one worker per settings, all on one key, and lets them go at once. */
async function race(settings: readonly SliceWorkerSettings[]): Promise<Record<string, unknown>[]> {
  const prefix = uniquePrefix('slices');
  const clients: WorkerClient[] = ['ioredis', 'ioredis-plain', 'ioredis', 'ioredis-plain'];
  const workers = await Promise.all(
    settings.map((s, i) =>
      startWorker(clients[i % clients.length] as WorkerClient, inject('redisUrl'), prefix, s),
    ),
  );
  for (const { child } of workers) child.stdin?.write('go\n');
  return Promise.all(workers.map((w) => w.result));
}

/**
 * Admissions per window of the store: window `k` runs from the end of window `k − 1` (exclusive) to its
 * own end, so what a process spends of an old slice after a window ended, before the next one began,
 * counts in the next one. Only whole windows: the first and the last are cut by the run.
 */
function perWindow(admittedAtMs: readonly number[], windowEnds: readonly number[]): number[] {
  const ends = [...new Set(windowEnds)].sort((a, b) => a - b);
  const counts = ends.map(() => 0);
  for (const atMs of admittedAtMs) {
    const window = ends.findIndex((end) => atMs < end);
    if (window !== -1) counts[window] = (counts[window] ?? 0) + 1;
  }
  return counts.slice(1, -1);
}

describe('token slices across 4 processes on one Redis', () => {
  it('admit exactly the limit when no leftover is given back (4 × 600 concurrent consumes)', async () => {
    // 600 is a whole number of slices: a process served in full ends on an empty slice.
    const settings: SliceWorkerSettings = {
      mode: 'burst',
      limit: 1_000,
      windowMs: 3_600_000,
      size: 25,
      ttlMs: 60_000,
      calls: 600,
    };
    const results = await race(Array.from({ length: PROCESSES }, () => settings));
    const allowed = results.map((r) => r.allowed as number);
    expect(allowed.reduce((sum, n) => sum + n, 0)).toBe(1_000);
  }, 60_000);

  const limit = 300;
  const size = 20;
  const windowMs = 500;
  const slack = PROCESSES * (size - 1);

  /**
   * Each process keeps 4 checks in flight for 4.2 s and idles once in a while, staggered, so its slice
   * expires and is given back into a later window (by the sweep or its next check) while the others
   * keep the key busy. With `slowPaceMs`, each also checks slowly by turns (below the limit), out of
   * step with the windows, so that a window can end with slices half spent and the next spend them.
   */
  function hammering(slowPaceMs: number, ttlMs: number): SliceWorkerSettings[] {
    return Array.from({ length: PROCESSES }, (_, i) => ({
      mode: 'hammer',
      limit,
      windowMs,
      size,
      ttlMs,
      durationMs: 4_200,
      concurrency: 4,
      pauses: [0, 1, 2].map((n) => [400 + i * 260 + n * 1_200, 400 + i * 260 + n * 1_200 + 330] as const),
      ...(slowPaceMs > 0 ? { phaseMs: 650, phaseOffsetMs: i * 90, slowPaceMs } : {}),
    }));
  }

  async function admittedPerWindow(settings: readonly SliceWorkerSettings[]): Promise<number[]> {
    const results = await race(settings);
    const counts = perWindow(
      results.flatMap((r) => r.admittedAtMs as number[]),
      results.flatMap((r) => r.windowEnds as number[]),
    );
    console.log(
      `token slices, admitted per ${windowMs} ms window (limit ${limit} ± ${slack}): ${counts.join(', ')}`,
    );
    expect(counts.length).toBeGreaterThanOrEqual(5);
    return counts;
  }

  it('admit within limit ± 4 × (size − 1) in every window while all keep checking, slices given back late', async () => {
    for (const count of await admittedPerWindow(hammering(0, 200))) {
      expect(count).toBeLessThanOrEqual(limit + slack);
      expect(count).toBeGreaterThanOrEqual(limit - slack);
    }
  }, 60_000);

  it('admit at most limit + 4 × (size − 1) in every window when windows end with slices half spent', async () => {
    for (const count of await admittedPerWindow(hammering(150, 400))) {
      expect(count).toBeLessThanOrEqual(limit + slack);
    }
  }, 60_000);
});
