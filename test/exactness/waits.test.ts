/**
 * Bounded waits across processes: 4 processes on one Redis (and on a Redis Cluster), each with 60
 * callers waiting on one key at once with `maxWait`. The store hands out turns: admitted per window of
 * turns at most the limit (the first window also the burst), every admitted caller resolved no sooner
 * than its turn and within `maxWait` (with slack for a loaded machine), every other refused at once
 * with a wait longer than `maxWait`, no turn handed out twice, and turns in the order the store decided.
 * Then the same with aborts: what aborted callers give back never lets a window exceed the limit.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { uniquePrefix } from '../harness/clients.js';
import type { WaitRecord, WaitWorkerSettings } from './wait-worker.js';
import type { WorkerClient } from './worker-clients.js';

const WORKER = fileURLToPath(new URL('./wait-worker.ts', import.meta.url));
const PROCESSES = 4;
/** 20 per 250 ms (a token every 12.5 ms), a burst of 5, callers who wait up to 1.5 s. */
const SETTINGS: WaitWorkerSettings = { limit: 20, windowMs: 250, burst: 5, maxWaitMs: 1_500, waiters: 60 };
/** What a loaded 2-core machine may add to a call: its round trip, a late timer. */
const SLACK_MS = 2_000;
/** How far this process's clock and the Redis server's may read apart, in ms (one host, both floored). */
const CLOCKS_MS = 2;

/** A worker process: its records of each race, one line of JSON per race, as they come. */
interface Worker {
  readonly child: ChildProcess;
  next(): Promise<WaitRecord[]>;
}

const TARGETS = () => [inject('redisUrl'), `cluster:${JSON.stringify(inject('redisClusterNodes'))}`];
const workers: Worker[] = [];

beforeAll(async () => {
  const prefix = uniquePrefix('waits');
  const clients: WorkerClient[] = ['ioredis', 'node-redis-6', 'ioredis-plain', 'iovalkey'];
  workers.push(...(await Promise.all(clients.map((client) => startWorker(client, prefix)))));
}, 60_000);

afterAll(async () => {
  for (const { child } of workers) child.stdin?.end();
  await Promise.all(
    workers.map(async ({ child }) => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      const timer = setTimeout(() => child.kill(), 5_000);
      await exited;
      clearTimeout(timer);
    }),
  );
});

async function startWorker(client: WorkerClient, prefix: string): Promise<Worker> {
  const argv = [WORKER, client, prefix, JSON.stringify(SETTINGS), ...TARGETS()];
  const child = spawn(process.execPath, ['--import', 'tsx', ...argv], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    for (let end = output.indexOf('\n'); end !== -1; end = output.indexOf('\n')) {
      const line = output.slice(0, end);
      output = output.slice(end + 1);
      const taker = waiting.shift();
      if (taker === undefined) lines.push(line);
      else taker(line);
    }
  });
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`wait worker (${client}) exited with ${code}`);
  });
  exited.catch(() => {}); // raced below, where it matters
  const nextLine = () =>
    Promise.race([
      new Promise<string>((resolve) => {
        const line = lines.shift();
        if (line === undefined) waiting.push(resolve);
        else resolve(line);
      }),
      exited,
    ]);
  expect(await nextLine()).toBe('ready');
  return { child, next: async () => JSON.parse(await nextLine()) as WaitRecord[] };
}

/**
 * Lets every worker go at once on target `n` (of {@link TARGETS}), and gathers every call; `aborts`:
 * the wave with aborts (see `wait-worker.ts`).
 */
async function race(n: number, kind = ''): Promise<WaitRecord[]> {
  for (const { child } of workers) child.stdin?.write(`go ${n} ${kind}\n`);
  return (await Promise.all(workers.map((w) => w.next()))).flat();
}

/** Turns per window of `windowMs`, the windows counted from the first turn. */
function perWindow(turnsAtMs: readonly number[]): number[] {
  const firstMs = Math.min(...turnsAtMs);
  const counts: number[] = [];
  for (const atMs of turnsAtMs) {
    const window = Math.floor((atMs - firstMs) / SETTINGS.windowMs);
    counts[window] = (counts[window] ?? 0) + 1;
  }
  return Array.from(counts, (count) => count ?? 0);
}

function checkWaits(all: readonly WaitRecord[], aborts = false): void {
  const { limit, burst, maxWaitMs, waiters } = SETTINGS;
  expect(all).toHaveLength(PROCESSES * waiters);
  const records = all.filter((r) => r.aborted !== true);
  if (aborts) expect(records.length).toBeLessThan(all.length);
  const admitted = records.filter((r) => r.allowed);
  const refused = records.filter((r) => !r.allowed);
  const turnOf = (r: WaitRecord) => r.decidedAtMs + (r.waitedMs ?? 0);
  // 240 callers at once take the bucket and at least 1.5 s of refill; no more than the refill until
  // the last turn; the rest are refused.
  const spanMs = Math.max(...admitted.map(turnOf)) - Math.min(...admitted.map((r) => r.decidedAtMs));
  if (!aborts)
    expect(admitted.length).toBeGreaterThanOrEqual(burst + (limit * maxWaitMs) / SETTINGS.windowMs);
  expect(admitted.length).toBeLessThanOrEqual(burst + Math.floor((limit * spanMs) / SETTINGS.windowMs) + 1);
  expect(refused.length).toBeGreaterThan(0);

  for (const r of admitted) {
    expect(r.waitedMs).toBeGreaterThanOrEqual(0);
    expect(r.waitedMs).toBeLessThanOrEqual(maxWaitMs);
    expect(r.resolvedAtMs).toBeGreaterThanOrEqual(turnOf(r) - CLOCKS_MS); // never before its turn
    expect(r.resolvedAtMs - r.calledAtMs).toBeLessThanOrEqual(maxWaitMs + SLACK_MS);
  }
  for (const r of refused) {
    expect(r.retryAfterMs).toBeGreaterThan(maxWaitMs); // refused only when the wait was too long
    expect(r.resolvedAtMs - r.calledAtMs).toBeLessThanOrEqual(SLACK_MS); // and at once
  }

  // A turn every 12.5 ms, each handed out once.
  const waited = admitted.filter((r) => (r.waitedMs ?? 0) > 0).map(turnOf);
  expect(new Set(waited).size).toBe(waited.length);
  // In the order the store decided: a caller decided later never has the earlier turn.
  const byDecision = [...admitted].sort((a, b) => a.decidedAtMs - b.decidedAtMs);
  for (let i = 1; i < byDecision.length; i++) {
    const [before, after] = [byDecision[i - 1] as WaitRecord, byDecision[i] as WaitRecord];
    if (after.decidedAtMs > before.decidedAtMs) expect(turnOf(after)).toBeGreaterThanOrEqual(turnOf(before));
  }

  const counts = perWindow(admitted.map(turnOf));
  console.log(
    `waits, admitted per ${SETTINGS.windowMs} ms window of turns (limit ${limit}): ${counts.join(', ')}`,
  );
  expect(counts[0]).toBeLessThanOrEqual(limit + burst);
  for (const count of counts.slice(1)) expect(count).toBeLessThanOrEqual(limit);
}

describe('bounded waits across 4 processes × 60 callers on one key', () => {
  it('on one Redis: at most the limit per window, every caller answered within maxWait or refused at once', async () => {
    checkWaits(await race(0));
  }, 60_000);

  it('on a Redis Cluster: the same', async () => {
    checkWaits(await race(1));
  }, 60_000);

  it('on one Redis, with a third of the first wave aborted and a second wave taking the turns given back', async () => {
    checkWaits(await race(0, 'aborts'), true);
  }, 60_000);
});
