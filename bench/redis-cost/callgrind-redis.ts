/**
 * The Redis-cost rows' server: `redis-server` under valgrind's callgrind, whose instruction counter is
 * zeroed before a row's checks and dumped after them. Instructions, unlike CPU time, barely move from
 * run to run, whatever else the machine is doing.
 */
import { execFile, spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { type BenchRedisServer, startRedisServer } from '../redis-server.js';

const run = promisify(execFile);

/** The tools the rows need, all from Debian's `valgrind` package. */
const TOOLS = ['valgrind', 'callgrind_control', 'callgrind_annotate'] as const;

/**
 * Redis's once-per-tick housekeeping (10 times a second by default, whatever the load; most of it
 * jemalloc's statistics). It costs as much per second idle as busy, so it is counted out: it belongs to
 * the time a row takes, which valgrind stretches, not to the checks.
 */
const PERIODIC_FUNCTION = 'serverCron';

/**
 * jemalloc's purging of unused pages, off: it runs when enough time has passed, so it would land in a
 * row at a moment that depends on how long the row has taken (and valgrind stretches time).
 */
const STILL_ALLOCATOR = 'dirty_decay_ms:-1,muzzy_decay_ms:-1';

/** A `redis-server` under callgrind. */
export interface CallgrindRedis {
  readonly url: string;
  /** valgrind's version, such as `valgrind-3.19.0`. */
  readonly valgrind: string;
  /** Sets the instruction counter to zero. */
  zero(): Promise<void>;
  /** Instructions Redis ran since `zero()` (its periodic housekeeping left out). */
  instructionsSinceZero(): Promise<number>;
  stop(): Promise<void>;
}

/** Why the callgrind rows cannot run on this machine; `undefined` when they can. */
export function callgrindMissing(): string | undefined {
  const missing = TOOLS.find((tool) => spawnSync(tool, ['--version']).error !== undefined);
  return missing === undefined ? undefined : `${missing} is not installed (apt-get install valgrind)`;
}

/** Starts `redis-server` under callgrind on a free loopback port, counting from its start. */
export async function startCallgrindRedis(): Promise<CallgrindRedis> {
  const valgrind = spawnSync('valgrind', ['--version'], { encoding: 'utf8' }).stdout.trim();
  const outFile = (dir: string) => join(dir, 'callgrind.out');
  const server: BenchRedisServer = await startRedisServer({
    wrapper: (dir) => [
      'env',
      `MALLOC_CONF=${STILL_ALLOCATOR}`,
      'valgrind',
      '--tool=callgrind',
      `--callgrind-out-file=${outFile(dir)}`,
    ],
    args: ['--enable-debug-command', 'local', '--slowlog-log-slower-than', '-1'],
  });
  try {
    await withoutActiveExpiry(server.url);
  } catch (error) {
    await server.stop();
    throw error;
  }
  let dumps = 0;
  return {
    url: server.url,
    valgrind,
    async zero() {
      await run('callgrind_control', ['--zero', String(server.pid)]);
    },
    async instructionsSinceZero() {
      await run('callgrind_control', ['--dump', String(server.pid)]);
      dumps++;
      // callgrind numbers its dumps: F.1, F.2, …
      return instructionsIn(`${outFile(server.dir)}.${dumps}`);
    },
    stop: () => server.stop(),
  };
}

/**
 * Turns Redis's active expiry off: a key that has expired is then deleted by the check that finds it,
 * and counted there, not by the housekeeping counted out, at a moment that depends on how long the row
 * has taken.
 */
async function withoutActiveExpiry(url: string): Promise<void> {
  const client = new Redis(url);
  try {
    await client.call('DEBUG', 'SET-ACTIVE-EXPIRE', '0');
  } finally {
    client.disconnect();
  }
}

/** A dump's instruction count (its `summary:` line), less what {@link PERIODIC_FUNCTION} ran. */
async function instructionsIn(file: string): Promise<number> {
  const dump = await readFile(file, 'utf8');
  const total = /^(?:summary|totals):\s+(\d+)/m.exec(dump)?.[1];
  if (total === undefined) throw new Error(`${file} has no summary: line; is this a callgrind dump?`);
  // Debian's redis-server has no debugging symbols, but its functions' names are exported (-rdynamic),
  // so callgrind_annotate can give one function's inclusive cost.
  const { stdout } = await run(
    'callgrind_annotate',
    ['--inclusive=yes', '--threshold=100', '--auto=no', file],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const periodic = new RegExp(`^\\s*([\\d,]+)\\s+\\([^)]*\\)\\s+\\S*:${PERIODIC_FUNCTION}\\s`, 'm').exec(
    stdout,
  )?.[1];
  return Number(total) - (periodic === undefined ? 0 : Number(periodic.replaceAll(',', '')));
}
