/**
 * The bench's command line: `pnpm bench [--quick] [--seed=N] [--load=wrk|autocannon] [--only=http|core]
 * [--framework=express|fastify|koa] [--json=file]` (`--json` also writes every round's raw figures to that
 * file; `--framework`, which may be given more than once, runs the HTTP rows of those frameworks only).
 */
import { parseArgs } from 'node:util';
import { FRAMEWORKS, type Framework } from './apps/scenarios.js';

/** How long and how often everything runs. */
export interface BenchConfig {
  readonly quick: boolean;
  /** Every HTTP variant runs once per round, in an order shuffled from this seed. */
  readonly seed: number;
  readonly rounds: number;
  readonly roundSec: number;
  /** Concurrent connections of the load generator, in every run. */
  readonly connections: number;
  /** Length of a warm-up run of the load generator (JIT warm-up; DENY: spends the limit). */
  readonly warmupSec: number;
  /** --quick: requests beyond the limit sent to each DENY app instead of a warm-up run. */
  readonly warmupRequests: number;
  readonly load: 'wrk' | 'autocannon' | undefined;
  readonly http: boolean;
  /** The frameworks whose HTTP rows run. */
  readonly frameworks: readonly Framework[];
  /** Where to write every round's raw figures as JSON, if anywhere. */
  readonly json: string | undefined;
  readonly core: boolean;
  /** Checks per sample of the core-only rows: Redis at concurrency 1, at 64, and in memory. */
  readonly coreChecks: { readonly serial: number; readonly concurrent: number; readonly memory: number };
  readonly coreRounds: number;
}

export function parseConfig(argv: readonly string[]): BenchConfig {
  const { values } = parseArgs({
    args: argv.filter((arg) => arg !== '--'),
    options: {
      quick: { type: 'boolean', default: false },
      seed: { type: 'string' },
      load: { type: 'string' },
      only: { type: 'string' },
      json: { type: 'string' },
      framework: { type: 'string', multiple: true },
    },
  });
  const { quick = false, load, only } = values;
  if (load !== undefined && load !== 'wrk' && load !== 'autocannon') {
    throw new Error(`--load must be wrk or autocannon; got ${load}`);
  }
  if (only !== undefined && only !== 'http' && only !== 'core') {
    throw new Error(`--only must be http or core; got ${only}`);
  }
  const frameworks = values.framework ?? [...FRAMEWORKS];
  for (const framework of frameworks) {
    if (!FRAMEWORKS.includes(framework as Framework)) {
      throw new Error(`--framework must be one of ${FRAMEWORKS.join(', ')}; got ${framework}`);
    }
  }
  const seed = values.seed === undefined ? Date.now() % 1_000_000 : Number(values.seed);
  return {
    quick,
    seed,
    rounds: quick ? 3 : 5,
    roundSec: quick ? 1 : 3,
    connections: 64,
    warmupSec: quick ? 1 : 2,
    warmupRequests: 20,
    load,
    http: only !== 'core',
    frameworks: frameworks as Framework[],
    json: values.json,
    core: only !== 'http',
    coreChecks: quick
      ? { serial: 1_000, concurrent: 5_000, memory: 200_000 }
      : { serial: 5_000, concurrent: 30_000, memory: 1_000_000 },
    coreRounds: quick ? 3 : 5,
  };
}
