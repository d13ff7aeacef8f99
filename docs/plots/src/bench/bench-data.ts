/** `data/bench.json`: the HTTP rounds of one `pnpm bench --json=…` run, in the bench's own shapes. */
import { readFileSync } from 'node:fs';
import type { CellResult } from '@tollgate/bench/http-bench.js';
import type { BenchConfig } from '@tollgate/bench/options.js';

/** What the run was: enough to say so under the picture. */
export type BenchRunConfig = Pick<BenchConfig, 'quick' | 'rounds' | 'roundSec' | 'connections' | 'seed'>;

/** The bench's raw HTTP figures, every round of every cell, of this build only (no `--against` rows). */
export interface BenchData {
  readonly config: BenchRunConfig;
  readonly http: readonly CellResult[];
}

/** `docs/plots/data/bench.json`. */
export const BENCH_DATA_FILE = new URL('../../data/bench.json', import.meta.url);

/** Reads `data/bench.json`. */
export function readBenchData(file: URL | string = BENCH_DATA_FILE): BenchData {
  return JSON.parse(readFileSync(file, 'utf8')) as BenchData;
}
