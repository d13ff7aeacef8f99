/**
 * The core-only rows (no HTTP), run in a child process pinned to the server core so that they measure one
 * core's worth of Node. Prints its results as one JSON line. argv: redisUrl configJson
 */
import { connectBenchRedis } from '../bench-redis.js';
import type { BenchConfig } from '../options.js';
import { CORE_RESULT_PREFIX, type CoreResults } from './core-results.js';
import { memoryRows } from './memory-rows.js';
import { redisRows } from './redis-rows.js';
import { sliceRows } from './slice-rows.js';
import { waitRows } from './wait-rows.js';

const [redisUrl = '', configJson = '{}'] = process.argv.slice(2);
const config = JSON.parse(configJson) as BenchConfig;

const client = await connectBenchRedis(redisUrl, { autoPipelining: false });
const peerClient = await connectBenchRedis(redisUrl, { autoPipelining: true });
const stats = await connectBenchRedis(redisUrl, { autoPipelining: false });
try {
  const results: CoreResults = {
    redis: [
      ...(await redisRows({
        client,
        peerClient,
        stats,
        serialChecks: config.coreChecks.serial,
        concurrentChecks: config.coreChecks.concurrent,
        rounds: config.coreRounds,
        seed: config.seed,
      })),
      // One hot key with and without token slices: checks per second, and what each costs Redis.
      ...(await sliceRows({
        client,
        stats,
        serialChecks: config.coreChecks.serial,
        concurrentChecks: config.coreChecks.concurrent,
        rounds: config.coreRounds,
        seed: config.seed,
      })),
      // A call that waits for its turn (what `delay` runs per request) beside one refused at once.
      ...(await waitRows({
        client,
        stats,
        concurrentChecks: config.coreChecks.concurrent,
        rounds: config.coreRounds,
        seed: config.seed,
      })),
    ],
    memory: await memoryRows(config.coreChecks.memory, config.coreRounds),
  };
  process.stdout.write(`${CORE_RESULT_PREFIX}${JSON.stringify(results)}\n`);
} finally {
  client.disconnect();
  peerClient.disconnect();
  stats.disconnect();
}
