/**
 * Processes and CPU time: pinning a process to one core with `taskset`, and reading a process's CPU time
 * (user + system, all of its threads) from `/proc/<pid>/stat`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** The core the app servers (and the core-only rows) run on. */
export const SERVER_CORE = 0;
/** The core of the load generator, Redis and this orchestrating process. */
export const LOAD_CORE = 1;

/** Whether processes can be pinned: `taskset` is installed and there are at least two cores. */
export const CAN_PIN = availableParallelism() >= 2 && spawnSync('taskset', ['--version']).status === 0;

/** Kernel clock ticks per second, the unit of utime/stime in `/proc/<pid>/stat` (almost always 100). */
const CLOCK_TICKS_PER_SECOND = clockTicksPerSecond();

/** The command and arguments that run `command` pinned to `core`, or unpinned when pinning is unavailable. */
export function pinnedCommand(core: number, command: string, args: readonly string[]): [string, string[]] {
  return CAN_PIN ? ['taskset', ['-c', String(core), command, ...args]] : [command, [...args]];
}

/** Pins a running process, every thread of it, to `core` (no-op when pinning is unavailable). */
export function pinProcess(pid: number, core: number): void {
  if (!CAN_PIN) return;
  execFileSync('taskset', ['-a', '-cp', String(core), String(pid)], { stdio: 'ignore' });
}

/**
 * CPU time a process has used so far, in microseconds: utime + stime of `/proc/<pid>/stat`, which count
 * every thread (JS, GC, libuv) but only at the kernel's tick resolution (10 ms at 100 Hz).
 */
export function processCpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // fields 14 (utime) and 15 (stime)
  return (ticks / CLOCK_TICKS_PER_SECOND) * 1e6;
}

/** The tick resolution of {@link processCpuUs}, in microseconds. */
export const CPU_TICK_US = 1e6 / CLOCK_TICKS_PER_SECOND;

function clockTicksPerSecond(): number {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(ticks) && ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
}
