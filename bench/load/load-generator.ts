/**
 * The load generator: a fixed number of connections for a fixed time, each request carrying the client
 * header the scenario asks for. `wrk` when it is installed (it leaves the most CPU to the server and
 * Redis), else autocannon in this process.
 */
import { spawnSync } from 'node:child_process';
import { autocannonLoad } from './autocannon-load.js';
import { wrkLoad } from './wrk-load.js';

/** One run of load against one server. */
export interface LoadSpec {
  readonly url: string;
  readonly connections: number;
  readonly durationSec: number;
  readonly header: string;
  /** Every request carries `${keyPrefix}${n}` with n drawn uniformly from 1..keys (1: always the same). */
  readonly keyPrefix: string;
  readonly keys: number;
}

/** What a run measured, from the load generator's side. */
export interface LoadResult {
  /** Responses received. */
  readonly requests: number;
  readonly durationSec: number;
  /** Responses by HTTP status, e.g. `{ '200': 51234 }`. */
  readonly statuses: Readonly<Record<string, number>>;
  /** Connect, read and write errors and timeouts. */
  readonly socketErrors: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export interface LoadGenerator {
  /** How the report names it, with its version. */
  readonly name: string;
  run(spec: LoadSpec): Promise<LoadResult>;
}

/** `wrk`, or autocannon when `wrk` is missing or `preferred` says so. */
export function chooseLoadGenerator(preferred: 'wrk' | 'autocannon' | undefined): LoadGenerator {
  const wrk = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  const wrkVersion = /wrk (\S+)/.exec(`${wrk.stdout}${wrk.stderr}`)?.[1];
  if (preferred === 'wrk' && wrkVersion === undefined) {
    throw new Error('--load=wrk, but wrk is not installed (apt-get install wrk)');
  }
  if (preferred !== 'autocannon' && wrkVersion !== undefined) return wrkLoad(wrkVersion);
  return autocannonLoad();
}
