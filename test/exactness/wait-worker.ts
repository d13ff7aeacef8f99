/**
 * One of several processes waiting on one key: connects to every target, then, for each line `go <n>`
 * on stdin, makes `waiters` calls of `consume` with `maxWait` at once on target n, and prints one line
 * of JSON: each call's answer and when (by this process's clock, ms since the epoch) it was made and it
 * resolved. `go <n> aborts`: half the calls at once, every third of them aborted at a random moment
 * of its wait, and the other half 300 ms later, into the turns given back. One process serves several
 * races, so the suite pays for its start once.
 * argv: client prefix settingsJson target… (see {@link WaitWorkerSettings})
 */
import { createLimiter, RedisStore } from '@tollgate/core';
import { connectWorkerClient } from './worker-clients.js';

/** What a wait worker is told to do. */
export interface WaitWorkerSettings {
  readonly limit: number;
  readonly windowMs: number;
  readonly burst: number;
  readonly maxWaitMs: number;
  readonly waiters: number;
}

/** One call's answer, as the worker prints it. */
export interface WaitRecord {
  readonly allowed: boolean;
  readonly decidedAtMs: number;
  readonly waitedMs: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly calledAtMs: number;
  readonly resolvedAtMs: number;
  /** The call was aborted (and rejected with the abort's reason). */
  readonly aborted?: true;
}

const [client = '', prefix = '', settingsJson = '{}', ...targets] = process.argv.slice(2);
const settings = JSON.parse(settingsJson) as WaitWorkerSettings;

const connections = await Promise.all(targets.map((target) => connectWorkerClient(client, target)));
const limiters = connections.map(({ client: redis }) =>
  createLimiter({
    store: new RedisStore({ client: redis, prefix }),
    policies: { limit: settings.limit, window: settings.windowMs, burst: settings.burst },
    namespace: 'waits',
    onStoreError: 'throw', // a store error must fail the run, not be taken by the insurance limiter
    timeout: '5s', // a loaded machine may be slow to answer; a wait given up on is not what is tested
  }),
);

async function call(limiter: (typeof limiters)[number], abortAfterMs?: number): Promise<WaitRecord> {
  const calledAtMs = Date.now();
  const signal = abortAfterMs === undefined ? undefined : AbortSignal.timeout(abortAfterMs);
  try {
    const { allowed, decidedAtMs, waitedMs, retryAfterMs } = await limiter.consume('partner-api', {
      maxWait: settings.maxWaitMs,
      signal,
    });
    return { allowed, decidedAtMs, waitedMs, retryAfterMs, calledAtMs, resolvedAtMs: Date.now() };
  } catch (error) {
    if (!signal?.aborted) throw error;
    const at = { decidedAtMs: 0, waitedMs: undefined, retryAfterMs: undefined };
    return { allowed: false, ...at, calledAtMs, resolvedAtMs: Date.now(), aborted: true };
  }
}

/** Half the calls now, every third aborted within its wait; the other half 300 ms later. */
async function withAborts(limiter: (typeof limiters)[number]): Promise<WaitRecord[]> {
  const half = Math.floor(settings.waiters / 2);
  const first = Array.from({ length: half }, (_, i) =>
    call(limiter, i % 3 === 0 ? 50 + Math.floor(Math.random() * 700) : undefined),
  );
  await new Promise((resolve) => setTimeout(resolve, 300));
  const second = Array.from({ length: settings.waiters - half }, () => call(limiter));
  return Promise.all([...first, ...second]);
}

let input = '';
process.stdin.setEncoding('utf8').on('data', async (chunk: string) => {
  input += chunk;
  for (let end = input.indexOf('\n'); end !== -1; end = input.indexOf('\n')) {
    const line = input.slice(0, end);
    input = input.slice(end + 1);
    const [, target, kind] = line.split(' ');
    const limiter = limiters[Number(target)];
    if (limiter === undefined) continue;
    const records =
      kind === 'aborts'
        ? await withAborts(limiter)
        : await Promise.all(Array.from({ length: settings.waiters }, () => call(limiter)));
    process.stdout.write(`${JSON.stringify(records)}\n`);
  }
});
process.stdin.on('end', async () => {
  await Promise.all(connections.map(({ close }) => close()));
  process.exit(0);
});
process.stdout.write('ready\n');
