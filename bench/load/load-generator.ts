/**
 * The load generator: a fixed number of connections for a fixed time, each request carrying the client
 * header the scenario asks for. `wrk` when it is installed (it leaves the most CPU to the server and
 * Redis), else autocannon in this process.
 */
import { spawnSync } from 'node:child_process';
import { autocannonLoad } from './autocannon-load.js';
import type { LoadGenerator } from './load-types.js';
import { wrkLoad } from './wrk-load.js';

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
