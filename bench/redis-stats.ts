/**
 * What the bench's Redis server did between two moments, from its own counters: CPU time (`INFO cpu`),
 * commands run (`INFO commandstats`, including those a script runs), script calls, and socket reads
 * (`INFO stats` total_reads_processed), which stand for round trips.
 */
import type { Redis } from 'ioredis';

/** Redis's cumulative counters at one moment. */
export interface RedisCounters {
  /** used_cpu_user + used_cpu_sys, in µs: the whole server process (main thread and background threads). */
  readonly cpuUs: number;
  /** Calls of every command, those run inside scripts included, but not our own INFO. */
  readonly commands: number;
  /** Calls of EVAL, EVALSHA, FCALL and their read-only forms. */
  readonly scriptCalls: number;
  /** Read events on client sockets: about one per batch of commands a client writes at once. */
  readonly reads: number;
}

const SCRIPT_COMMANDS = new Set(['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro']);

/** Reads the counters with one INFO call on `client` (a connection used for nothing else). */
export async function redisCounters(client: Redis): Promise<RedisCounters> {
  const info = String(await client.call('INFO', 'cpu', 'commandstats', 'stats'));
  let commands = 0;
  let scriptCalls = 0;
  for (const [, name = '', calls] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (name === 'info') continue;
    commands += Number(calls);
    if (SCRIPT_COMMANDS.has(name)) scriptCalls += Number(calls);
  }
  const cpuSeconds = field(info, 'used_cpu_user') + field(info, 'used_cpu_sys');
  return { cpuUs: cpuSeconds * 1e6, commands, scriptCalls, reads: field(info, 'total_reads_processed') };
}

/** What happened between `before` and `after`, without the read that carried the second INFO. */
export function countersBetween(before: RedisCounters, after: RedisCounters): RedisCounters {
  return {
    cpuUs: after.cpuUs - before.cpuUs,
    commands: after.commands - before.commands,
    scriptCalls: after.scriptCalls - before.scriptCalls,
    reads: Math.max(0, after.reads - before.reads - 1),
  };
}

function field(info: string, name: string): number {
  const match = new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info);
  if (!match) throw new Error(`INFO has no ${name}: is this Redis 6 or newer?`);
  return Number(match[1]);
}
