/**
 * Measures each driver in each of its shapes: a callgrind Redis of its own per driver (what one library
 * leaves in the allocator does not move another's figures), then per shape: flush, open the driver, warm
 * up, zero the counter, drive the checks, dump. Commands and script calls come from INFO, read outside
 * the counted stretch.
 */
import type { Redis } from 'ioredis';
import { connectBenchRedis } from '../bench-redis.js';
import { countersBetween, redisCounters } from '../redis-stats.js';
import { type CallgrindRedis, startCallgrindRedis } from './callgrind-redis.js';
import type { CostDriver, CostRowResult, DriverClients, Shape } from './cost-types.js';
import { ALL_SHAPES, drive, ownersOf, warmUpChecks } from './shapes.js';

/** The rows of every driver, shape by shape, and the valgrind that counted them. */
export async function measureRows(
  drivers: readonly CostDriver[],
  checks: number,
): Promise<{ rows: CostRowResult[]; valgrind: string }> {
  const rows: CostRowResult[] = [];
  let valgrind = '';
  for (const driver of drivers) {
    const server = await startCallgrindRedis();
    valgrind = server.valgrind;
    const connections = await Promise.all([
      connectBenchRedis(server.url, { autoPipelining: false }),
      connectBenchRedis(server.url, { autoPipelining: true }),
      connectBenchRedis(server.url, { autoPipelining: false }),
    ]);
    const [tollgate, pipelined, stats] = connections;
    try {
      for (const shape of driver.shapes) {
        const row = await measureRow(driver, shape, {
          server,
          clients: { tollgate, pipelined },
          stats,
          checks,
        });
        process.stderr.write(
          `[redis-cost] ${row.label}, ${shape.label}: ${(row.instructionsPerCheck / 1000).toFixed(1)}k instructions per check\n`,
        );
        rows.push(row);
      }
    } finally {
      for (const connection of connections) connection.disconnect();
      await server.stop();
    }
  }
  const shapeOrder = (row: CostRowResult) => ALL_SHAPES.indexOf(row.shape);
  return { rows: rows.sort((a, b) => shapeOrder(a) - shapeOrder(b)), valgrind };
}

/** What a row runs on. */
interface RowSettings {
  readonly server: CallgrindRedis;
  readonly clients: DriverClients;
  /** A connection for FLUSHALL, SCRIPT FLUSH and INFO only. */
  readonly stats: Redis;
  /** Checks counted. */
  readonly checks: number;
}

async function measureRow(
  driver: CostDriver,
  shape: Shape,
  { server, clients, stats, checks }: RowSettings,
): Promise<CostRowResult> {
  // A fresh Lua state too: its garbage collector then starts each row at the same point of its cycle.
  await stats.flushall();
  await stats.script('FLUSH');
  const owners = ownersOf(shape);
  const opened = await driver.open(clients, owners);
  let refused = await drive(opened.check, owners, shape, warmUpChecks(shape));
  const before = await redisCounters(stats);
  await server.zero();
  refused += await drive(opened.check, owners, shape, checks);
  const instructions = await server.instructionsSinceZero();
  const counted = countersBetween(before, await redisCounters(stats));
  await opened.close?.();
  if (refused > 0) {
    throw new Error(
      `${driver.label}, ${shape.label}: ${refused} checks refused or degraded, where none may be; ` +
        'no figure of this run is valid',
    );
  }
  return {
    label: driver.label,
    family: driver.family,
    floor: driver.floor,
    shape,
    checks,
    instructionsPerCheck: instructions / checks,
    commandsPerCheck: counted.commands / checks,
    scriptCallsPerCheck: counted.scriptCalls / checks,
  };
}
