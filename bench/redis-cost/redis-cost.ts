/**
 * `pnpm bench --redis-cost`: what a check costs Redis, counted, not timed. Instructions per check of
 * redis-server under callgrind, for Tollgate's configurations, the peers and the floor scripts, in four
 * shapes; then Redis memory per limited client on a plain redis-server.
 */
import { callgrindMissing } from './callgrind-redis.js';
import { costTable, memoryTable } from './cost-table.js';
import type { CostRowResult, MemoryRowResult } from './cost-types.js';
import { floorDrivers } from './floor-drivers.js';
import { measureRows } from './measure-rows.js';
import { peerDrivers } from './peer-drivers.js';
import { memoryRows } from './redis-memory.js';
import { tollgateDrivers } from './tollgate-drivers.js';

/** Checks counted per row, after its warm-up: valgrind runs Redis about 50 times slower. */
const CHECKS_PER_ROW = 2000;

/** Everything a `--redis-cost` run measured. */
export interface RedisCostResults {
  readonly date: string;
  readonly node: string;
  readonly redis: string;
  /** valgrind's version; `undefined` when it is missing and the instruction rows were skipped. */
  readonly valgrind: string | undefined;
  readonly checksPerRow: number;
  /** Why the instruction rows did not run, if they did not. */
  readonly skipped: string | undefined;
  readonly rows: readonly CostRowResult[];
  readonly memory: readonly MemoryRowResult[];
}

/** Runs the instruction rows (when valgrind is installed), then the memory rows. */
export async function runRedisCost(): Promise<RedisCostResults> {
  const skipped = callgrindMissing();
  const counted = skipped === undefined ? await countedRows() : undefined;
  const memory = await memoryRows();
  return {
    date: new Date().toISOString().slice(0, 10),
    node: process.versions.node,
    redis: memory.redis,
    valgrind: counted?.valgrind,
    checksPerRow: CHECKS_PER_ROW,
    skipped,
    rows: counted?.rows ?? [],
    memory: memory.rows,
  };
}

/** The run as Markdown: where it ran, the instruction table (or why it was skipped), the memory table. */
export function redisCostReport(results: RedisCostResults): string {
  const context = [
    `${results.date}, Node ${results.node}, Redis ${results.redis}` +
      (results.valgrind === undefined ? '.' : `, ${results.valgrind} (callgrind).`),
  ];
  if (results.skipped === undefined) {
    context.push(
      `${results.checksPerRow.toLocaleString('en-US')} checks counted per row after a warm-up; instructions ` +
        "of the whole redis-server (every thread), without its periodic housekeeping (serverCron); floors: the smallest Lua that runs the algorithm's Redis commands.",
    );
  }
  const instructions =
    results.skipped === undefined
      ? costTable(results.rows)
      : `Instructions per check: skipped, ${results.skipped}.`;
  return [
    '## Tollgate bench: what a check costs Redis',
    context.join('\n'),
    `### Instructions per check\n\n${instructions}`,
    `### Redis memory per limited client\n\n${memoryTable(results.memory)}`,
  ].join('\n\n');
}

async function countedRows(): Promise<{ rows: CostRowResult[]; valgrind: string }> {
  return measureRows([...tollgateDrivers(), ...peerDrivers(), ...floorDrivers()], CHECKS_PER_ROW);
}
