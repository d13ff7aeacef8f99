/**
 * The core-only rows (no HTTP), run in a child process pinned to the server core so that they measure one
 * core's worth of Node. Prints its results as one JSON line. argv: redisUrl configJson
 */
import { Redis } from 'ioredis';
import type { BenchConfig } from '../options.js';
import { CORE_RESULT_PREFIX, type CoreResults } from './core-results.js';
import { memoryRows } from './memory-rows.js';
import { redisRows } from './redis-rows.js';

const [redisUrl = '', configJson = '{}'] = process.argv.slice(2);
const config = JSON.parse(configJson) as BenchConfig;

/** The same client options as the HTTP bench's servers: fail fast, auto-pipelining. */
async function connect(): Promise<Redis> {
  const client = new Redis(redisUrl, {
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
  });
  client.on('error', (error) => console.error(`redis: ${error.message}`));
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
  return client;
}

const client = await connect();
const stats = await connect();
try {
  const results: CoreResults = {
    redis: await redisRows({
      client,
      stats,
      serialChecks: config.coreChecks.serial,
      concurrentChecks: config.coreChecks.concurrent,
      rounds: config.coreRounds,
      seed: config.seed,
    }),
    memory: await memoryRows(config.coreChecks.memory, config.coreRounds),
  };
  process.stdout.write(`${CORE_RESULT_PREFIX}${JSON.stringify(results)}\n`);
} finally {
  client.disconnect();
  stats.disconnect();
}
