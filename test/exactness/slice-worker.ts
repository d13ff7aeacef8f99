/**
 * One of several processes checking one hot key through token slices: waits for "go" on stdin, then
 * checks, and prints one line of JSON.
 * argv: client target prefix settingsJson (see {@link SliceWorkerSettings})
 * - `burst`: fires `calls` consumes at once; prints `{ allowed }`.
 * - `hammer`: keeps `concurrency` consumes in flight for `durationMs`, slowly in every other phase,
 *   each loop idle during its `pauses` (ms from go, so its slice expires and is given back late);
 *   prints every admission's `decidedAtMs` and the window ends the decisions name.
 */
import { createLimiter, RedisStore } from '@tollgate/core';
import { connectWorkerClient } from './worker-clients.js';

/** What a slice worker is told to do. */
export interface SliceWorkerSettings {
  readonly mode: 'burst' | 'hammer';
  readonly limit: number;
  /** The fixed window, in ms. */
  readonly windowMs: number;
  readonly size: number;
  readonly ttlMs: number;
  /** `burst`: how many consumes. */
  readonly calls?: number;
  /** `hammer`: for how long, with how many in flight, idle when. */
  readonly durationMs?: number;
  readonly concurrency?: number;
  readonly pauses?: readonly (readonly [number, number])[];
  /**
   * `hammer`: every other `phaseMs` (from `phaseOffsetMs`), each loop waits up to `slowPaceMs` between
   * checks, so that some windows end with slices half spent and the next ones spend them.
   */
  readonly phaseMs?: number;
  readonly phaseOffsetMs?: number;
  readonly slowPaceMs?: number;
}

const [client = '', target = '', prefix = '', settingsJson = '{}'] = process.argv.slice(2);
const settings = JSON.parse(settingsJson) as SliceWorkerSettings;

const { client: redis, close } = await connectWorkerClient(client, target);
const limiter = createLimiter({
  store: new RedisStore({ client: redis, prefix }),
  policies: {
    limit: settings.limit,
    window: settings.windowMs,
    algorithm: 'fixed-window',
    slice: { size: settings.size, ttl: settings.ttlMs },
  },
  namespace: 'slices',
  onStoreError: 'throw', // a store error must fail the run, not be taken by the insurance limiter
});

async function burst(): Promise<Record<string, unknown>> {
  const decisions = await Promise.all(
    Array.from({ length: settings.calls ?? 0 }, () => limiter.consume('hot-key')),
  );
  return { allowed: decisions.filter((d) => d.allowed).length };
}

async function hammer(): Promise<Record<string, unknown>> {
  const admittedAtMs: number[] = [];
  const windowEnds = new Set<number>();
  const startedMs = performance.now();
  const idle = (sinceMs: number) =>
    (settings.pauses ?? []).find(([from, to]) => sinceMs >= from && sinceMs < to);
  await Promise.all(
    Array.from({ length: settings.concurrency ?? 1 }, async () => {
      for (;;) {
        const sinceMs = performance.now() - startedMs;
        if (sinceMs >= (settings.durationMs ?? 0)) return;
        const pause = idle(sinceMs);
        if (pause !== undefined) {
          await new Promise((resolve) => setTimeout(resolve, pause[1] - sinceMs));
          continue;
        }
        const { phaseMs = 0, phaseOffsetMs = 0, slowPaceMs = 0 } = settings;
        if (phaseMs > 0 && Math.floor((sinceMs + phaseOffsetMs) / phaseMs) % 2 === 0) {
          await new Promise((resolve) => setTimeout(resolve, Math.random() * slowPaceMs));
        }
        const decision = await limiter.consume('hot-key');
        if (!decision.allowed) {
          await new Promise((resolve) => setImmediate(resolve)); // refusals come from the deny cache: yield
          continue;
        }
        admittedAtMs.push(decision.decidedAtMs);
        // A decision that knows its window names its end; one spent past it has a fresh state, resetMs 0.
        const { resetMs } = decision.decidedBy;
        if (resetMs > 0) windowEnds.add(decision.decidedAtMs + resetMs);
      }
    }),
  );
  return { admittedAtMs, windowEnds: [...windowEnds] };
}

process.stdout.write('ready\n');
process.stdin.once('data', async () => {
  const result = settings.mode === 'burst' ? await burst() : await hammer();
  process.stdout.write(`${JSON.stringify(result)}\n`);
  await close();
  process.exit(0);
});
