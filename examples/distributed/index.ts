/**
 * The problem Tollgate exists for, shown live: three app processes behind a round-robin proxy and one
 * client sending a burst. With a MemoryStore in each process the client gets three times the limit;
 * with one RedisStore shared by all three, exactly the limit. Everything listens on 127.0.0.1 only and
 * is stopped at the end, on error and on Ctrl-C.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:os';
import { startAppProcess } from './app-processes.js';
import { type BurstTally, sendBurst } from './burst.js';
import { demoRedis } from './demo-redis.js';
import { startRoundRobinProxy } from './proxy.js';
import { ResourceStack } from './resource-stack.js';
import { APP_PROCESS_COUNT, BURST_SIZE, LIMIT_PER_MINUTE } from './settings.js';
import { formatTable, type ResultRow } from './table.js';

const started = new ResourceStack();

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    console.log(`\n${signal}: stopping everything the demo started`);
    void started.unwind().finally(() => process.exit(128 + constants.signals[signal]));
  });
}

/**
 * Starts the app processes (on Redis when `redisUrl` is given, else each in its own memory) and the proxy,
 * sends the burst, and stops them all again.
 */
async function measure(redisUrl: string | undefined): Promise<BurstTally> {
  const mark = started.size;
  try {
    // A fresh limiter name (its namespace in Redis) per run, so a rerun within the minute starts from
    // full buckets instead of the ones the last run drained. The old keys expire on their own.
    const limiterName = `distributed-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
    const apps = Array.from({ length: APP_PROCESS_COUNT }, () => startAppProcess({ limiterName, redisUrl }));
    for (const app of apps) started.defer(app.stop);
    const ports = await Promise.all(apps.map((app) => app.ready));

    const proxy = await startRoundRobinProxy(ports);
    started.defer(() => proxy.close());
    return await sendBurst(`http://127.0.0.1:${proxy.port}/`, BURST_SIZE, APP_PROCESS_COUNT);
  } finally {
    await started.unwind(mark);
  }
}

async function main(): Promise<void> {
  console.log(
    `${APP_PROCESS_COUNT} app processes, each with rateLimit({ limit: ${LIMIT_PER_MINUTE}, window: '1m' }), ` +
      `behind a round-robin proxy;\none client sends ${BURST_SIZE} requests at once.\n`,
  );
  const rows: ResultRow[] = [];

  console.log('measuring with a MemoryStore in each process …');
  rows.push({
    store: 'MemoryStore, one per process',
    expectedAllowed: APP_PROCESS_COUNT * LIMIT_PER_MINUTE,
    tally: await measure(undefined),
  });

  const redis = await demoRedis(started);
  if ('skipped' in redis) {
    rows.push({ store: 'RedisStore, shared', skipped: redis.skipped });
  } else {
    console.log(`measuring with one RedisStore (${redis.description}) …`);
    rows.push({
      store: 'RedisStore, shared',
      expectedAllowed: LIMIT_PER_MINUTE,
      tally: await measure(redis.url),
    });
  }

  // After Ctrl-C the processes were stopped mid-burst: the numbers would mean nothing.
  if (interrupted) return;
  console.log(`\n${formatTable(rows)}\n`);
  console.log(
    `In memory each process counts only the requests it sees, so ${APP_PROCESS_COUNT} × ${LIMIT_PER_MINUTE} get through.`,
  );
  if (!('skipped' in redis)) {
    console.log(
      `On Redis the ${APP_PROCESS_COUNT} processes charge one bucket, so exactly ${LIMIT_PER_MINUTE} do.`,
    );
  }
}

try {
  await main();
} catch (error) {
  // After Ctrl-C, requests and starts fail because we stopped their processes: not worth a report.
  if (!interrupted) {
    console.error(`the demo failed: ${(error as Error).stack ?? error}`);
    process.exitCode = 1;
  }
} finally {
  await started.unwind();
}
