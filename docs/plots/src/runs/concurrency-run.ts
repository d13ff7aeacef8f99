/** Data of the concurrency picture: requests of varying length through `createConcurrencyLimiter` (limit 3). */
import { createConcurrencyLimiter, type Lease, MemoryStore } from '@tollgate/core';
import { virtualClock } from './virtual-clock.js';

/** The most requests of the client in progress at once. */
export const CONCURRENCY_LIMIT = 3;
const DURATION_MS = 15_000;
/** Time between one request and the next, and how long each takes, in turn: a deterministic mix. */
export const GAPS_MS: readonly number[] = [200, 500, 300, 700, 250, 400];
export const WORK_MS: readonly number[] = [800, 2000, 500, 1200, 2600, 300, 1000];

/** Requests in progress from `atSec` on: those admitted, and those there would be with no limit. */
export interface InProgress {
  readonly atSec: number;
  readonly admitted: number;
  readonly unlimited: number;
}

/** What {@link concurrencyRun} saw. */
export interface ConcurrencyRun {
  readonly inProgress: InProgress[];
  /** When each refused request arrived, in seconds. */
  readonly refusedAtSec: number[];
}

interface Request {
  readonly arrivesMs: number;
  readonly workMs: number;
}

function requests(): Request[] {
  const list: Request[] = [];
  for (let i = 0, atMs = 0; atMs < DURATION_MS; atMs += GAPS_MS[i % GAPS_MS.length] as number, i++) {
    list.push({ arrivesMs: atMs, workMs: WORK_MS[i % WORK_MS.length] as number });
  }
  return list;
}

/**
 * Runs the requests through a concurrency limiter on a `MemoryStore` with a virtual clock: each admitted
 * request releases its lease when its work is done (a release and an arrival at the same instant: the
 * release first). Records the counts in progress after each instant with an arrival or a release.
 *
 * @example
 * const { inProgress, refusedAtSec } = await concurrencyRun();
 */
export async function concurrencyRun(): Promise<ConcurrencyRun> {
  const clock = virtualClock();
  const limiter = createConcurrencyLimiter({
    store: new MemoryStore({ clock: clock.now }),
    limit: CONCURRENCY_LIMIT,
  });
  const all = requests();
  const running: { endsMs: number; lease: Lease }[] = [];
  const inProgress: InProgress[] = [{ atSec: 0, admitted: 0, unlimited: 0 }];
  const refusedAtSec: number[] = [];
  // One point per instant: the counts after everything that happened at it.
  const record = (atMs: number) => {
    const unlimited = all.filter((r) => r.arrivesMs <= atMs && atMs < r.arrivesMs + r.workMs).length;
    if (inProgress.at(-1)?.atSec === atMs / 1000) inProgress.pop();
    inProgress.push({ atSec: atMs / 1000, admitted: running.length, unlimited });
  };
  const releaseUntil = async (untilMs: number) => {
    running.sort((a, b) => a.endsMs - b.endsMs);
    while (running[0] !== undefined && running[0].endsMs <= untilMs) {
      const { endsMs, lease } = running.shift() as { endsMs: number; lease: Lease };
      clock.set(endsMs);
      await lease.release();
      record(endsMs);
    }
  };
  for (const { arrivesMs, workMs } of all) {
    await releaseUntil(arrivesMs);
    clock.set(arrivesMs);
    const { acquired, lease } = await limiter.acquire('client');
    if (acquired && lease) running.push({ endsMs: arrivesMs + workMs, lease });
    else refusedAtSec.push(arrivesMs / 1000);
    record(arrivesMs);
  }
  await releaseUntil(Number.POSITIVE_INFINITY);
  return { inProgress, refusedAtSec };
}
