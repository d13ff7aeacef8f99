/**
 * Redis's memory per limited client: 100,000 clients each brought to its limit (5 checks of a limit of 5
 * per minute), on a plain redis-server; `INFO memory` before and after, per client. Tollgate's three
 * algorithms and each peer, one after the other on a flushed server.
 */
import { type AlgorithmName, createLimiter, RedisStore } from '@tollgate/core';
import type { Redis } from 'ioredis';
import { connectBenchRedis } from '../bench-redis.js';
import { startRedisServer } from '../redis-server.js';
import type { Check, MemoryRowResult } from './cost-types.js';
import { PEERS } from './peer-drivers.js';

const CLIENTS = 100_000;
const LIMIT = 5;
/** Checks started together: Tollgate batches them, the peers' client pipelines them. */
const IN_FLIGHT = 1000;

/** One limiter whose memory is measured: a check on `redis` of `LIMIT` per minute. */
interface MemoryDriver {
  readonly label: string;
  readonly pipelined: boolean;
  open(redis: Redis): Promise<Check>;
}

const ALGORITHMS: readonly [AlgorithmName, string][] = [
  ['token-bucket', 'token bucket'],
  ['fixed-window', 'fixed window'],
  ['sliding-window', 'sliding window'],
];

const DRIVERS: readonly MemoryDriver[] = [
  ...ALGORITHMS.map(
    ([algorithm, name]): MemoryDriver => ({
      label: `Tollgate, ${name}`,
      pipelined: false,
      open: async (redis) => {
        const limiter = createLimiter({
          store: new RedisStore({ client: redis }),
          policies: { limit: LIMIT, window: '1m', algorithm },
        });
        return async (owner) => {
          const decision = await limiter.consume(owner);
          return decision.allowed && !decision.degraded;
        };
      },
    }),
  ),
  ...PEERS.map(
    (peer): MemoryDriver => ({ ...peer, pipelined: true, open: (redis) => peer.open(redis, LIMIT) }),
  ),
];

/** Bytes of Redis memory per client at its limit, for each driver, and the version of that Redis. */
export async function memoryRows(): Promise<{ rows: MemoryRowResult[]; redis: string }> {
  const server = await startRedisServer();
  const clients = {
    plain: await connectBenchRedis(server.url, { autoPipelining: false }),
    pipelined: await connectBenchRedis(server.url, { autoPipelining: true }),
  };
  const stats = await connectBenchRedis(server.url, { autoPipelining: false });
  const owners = Array.from({ length: CLIENTS }, (_, i) => `client-${String(i).padStart(6, '0')}`);
  try {
    const rows: MemoryRowResult[] = [];
    for (const driver of DRIVERS) {
      const check = await driver.open(driver.pipelined ? clients.pipelined : clients.plain);
      // Scripts loaded first: the script cache is not a client's.
      await check('warm-up');
      await stats.flushall();
      const before = await dataMemory(stats);
      await toTheLimit(driver.label, check, owners);
      const bytes = (await dataMemory(stats)) - before;
      rows.push({ label: driver.label, clients: CLIENTS, bytesPerClient: bytes / CLIENTS });
      process.stderr.write(
        `[redis-cost] memory, ${driver.label}: ${Math.round(bytes / CLIENTS)} bytes per client\n`,
      );
    }
    const info = String(await stats.call('INFO', 'server'));
    return { rows, redis: /^redis_version:(\S+)/m.exec(info)?.[1] ?? '?' };
  } finally {
    clients.plain.disconnect();
    clients.pipelined.disconnect();
    stats.disconnect();
    await server.stop();
  }
}

/** `LIMIT` checks of every owner, `IN_FLIGHT` at a time; throws if one was refused. */
async function toTheLimit(label: string, check: Check, owners: readonly string[]): Promise<void> {
  for (let round = 0; round < LIMIT; round++) {
    for (let first = 0; first < owners.length; first += IN_FLIGHT) {
      const answers = await Promise.all(owners.slice(first, first + IN_FLIGHT).map(check));
      if (answers.includes(false)) throw new Error(`${label}: a check within the limit was refused`);
    }
  }
}

/** used_memory less the clients' buffers, which a pipelined burst leaves behind for a while. */
async function dataMemory(stats: Redis): Promise<number> {
  const info = String(await stats.call('INFO', 'memory'));
  const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  return field('used_memory') - field('mem_clients_normal');
}
