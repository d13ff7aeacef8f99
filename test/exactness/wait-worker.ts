/**
 * One of several processes waiting on one key: connects to every target, then, for each line `go <n>`
 * on stdin, makes `waiters` calls of `consume` with `maxWait` at once on target n, and prints one line
 * of JSON: each call's answer and when (by this process's clock, ms since the epoch) it was made and it
 * resolved. One process serves several races, so the suite pays for its start once.
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

async function call(limiter: (typeof limiters)[number]): Promise<WaitRecord> {
  const calledAtMs = Date.now();
  const { allowed, decidedAtMs, waitedMs, retryAfterMs } = await limiter.consume('partner-api', {
    maxWait: settings.maxWaitMs,
  });
  return { allowed, decidedAtMs, waitedMs, retryAfterMs, calledAtMs, resolvedAtMs: Date.now() };
}

let input = '';
process.stdin.setEncoding('utf8').on('data', async (chunk: string) => {
  input += chunk;
  for (let end = input.indexOf('\n'); end !== -1; end = input.indexOf('\n')) {
    const line = input.slice(0, end);
    input = input.slice(end + 1);
    const limiter = limiters[Number(line.split(' ')[1])];
    if (limiter === undefined) continue;
    const records = await Promise.all(Array.from({ length: settings.waiters }, () => call(limiter)));
    process.stdout.write(`${JSON.stringify(records)}\n`);
  }
});
process.stdin.on('end', async () => {
  await Promise.all(connections.map(({ close }) => close()));
  process.exit(0);
});
process.stdout.write('ready\n');
