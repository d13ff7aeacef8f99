/**
 * `pnpm --filter @tollgate/docs-plots bench:extract <file>`: turns the JSON of a `pnpm bench --json=<file>`
 * run into `data/bench.json`, keeping the HTTP rounds of this build (the core rows and any `--against`
 * build are left out), indented as the repository's formatter keeps JSON.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { CellResult } from '@tollgate/bench/http-bench.js';
import type { BenchConfig } from '@tollgate/bench/options.js';
import { BENCH_DATA_FILE, type BenchData } from './bench-data.js';

const [input] = process.argv.slice(2).filter((arg) => arg !== '--');
if (input === undefined)
  throw new Error('usage: pnpm --filter @tollgate/docs-plots bench:extract <bench.json>');
// Relative to where the command was typed (INIT_CWD), not to this package, where pnpm runs it.
const raw = JSON.parse(readFileSync(resolve(process.env.INIT_CWD ?? process.cwd(), input), 'utf8')) as {
  config: BenchConfig;
  http?: CellResult[];
};
if (raw.http === undefined) throw new Error(`${input} has no HTTP rows: run the bench without --only=core`);
const { quick, rounds, roundSec, connections, seed } = raw.config;
const data: BenchData = {
  config: { quick, rounds, roundSec, connections, seed },
  http: raw.http.filter((cell) => cell.build === 'this'),
};
writeFileSync(BENCH_DATA_FILE, `${JSON.stringify(data, null, 2)}\n`);
console.log(`wrote ${BENCH_DATA_FILE.pathname}: ${data.http.length} cells`);
