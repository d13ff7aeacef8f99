/**
 * The bench's command line: `pnpm bench [--quick] [--seed=N] [--load=wrk|autocannon] [--only=http|core]
 * [--framework=express|fastify|koa|hono|nestjs] [--json=file] [--against=DIR]` (`--json` also writes every
 * round's raw figures to that file; `--framework`, which may be given more than once, runs the HTTP rows of
 * those frameworks only; `--against` runs every Tollgate HTTP variant a second time from the built
 * `packages/<name>/dist` of DIR, another checkout of this repository, in the same shuffled rounds, and
 * reports this build ÷ DIR's, so a change is measured beside the code before it in one sitting; a framework
 * whose adapter DIR does not have, as older checkouts have no packages/hono, runs this build only, with a
 * note under the ratios; the core rows run this build only). `pnpm bench --redis-cost [--json=file]` runs
 * only the Redis-cost tables (`redis-cost/`): instructions per check under callgrind, memory per client.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
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
  /** `--against`: the absolute path of another checkout whose built packages Tollgate's variants also run. */
  readonly against: string | undefined;
  /** `--against`: the frameworks whose Tollgate variants also run from that checkout (it has their package). */
  readonly againstFrameworks: readonly Framework[];
  readonly core: boolean;
  /** Checks per sample of the core-only rows: Redis at concurrency 1, at 64, and in memory. */
  readonly coreChecks: { readonly serial: number; readonly concurrent: number; readonly memory: number };
  readonly coreRounds: number;
  /** `--redis-cost`: the Redis-cost tables alone, instead of the HTTP and core rows. */
  readonly redisCost: boolean;
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
      against: { type: 'string' },
      'redis-cost': { type: 'boolean', default: false },
    },
  });
  const { quick = false, load, only } = values;
  const redisCost = values['redis-cost'] === true;
  if (redisCost && (only !== undefined || values.against !== undefined || values.framework !== undefined)) {
    throw new Error('--redis-cost runs alone: it takes no --only, --against or --framework');
  }
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
  // Relative to where `pnpm bench` was typed (INIT_CWD), not to bench/, where pnpm runs the script.
  const cwd = process.env.INIT_CWD ?? process.cwd();
  const against = values.against === undefined ? undefined : resolve(cwd, values.against);
  if (against !== undefined && only === 'core') {
    throw new Error('--against runs the HTTP rows of both builds; the core rows run this build only');
  }
  const againstFrameworks =
    against === undefined ? [] : frameworksBuiltIn(against, frameworks as Framework[]);
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
    against,
    againstFrameworks,
    core: only !== 'http',
    coreChecks: quick
      ? { serial: 1_000, concurrent: 5_000, memory: 200_000 }
      : { serial: 5_000, concurrent: 30_000, memory: 1_000_000 },
    coreRounds: quick ? 3 : 5,
    redisCost,
  };
}

/**
 * `--against=DIR` must be a checkout with the packages the HTTP variants load already built: the core and
 * each framework's adapter, `packages/<framework>`. A framework whose package DIR does not have at all (a
 * checkout from before it) is left out of the `against` rows; one that DIR has but has not built is an
 * error. Resolves to the frameworks DIR can run.
 */
function frameworksBuiltIn(dir: string, frameworks: readonly Framework[]): Framework[] {
  if (!existsSync(dir)) throw new Error(`--against: ${dir} does not exist`);
  requireBuilt(dir, 'core');
  const present = frameworks.filter((framework) => existsSync(join(dir, 'packages', framework)));
  for (const framework of present) requireBuilt(dir, framework);
  return present;
}

function requireBuilt(dir: string, name: string): void {
  const entry = join(dir, 'packages', name, 'dist', 'index.mjs');
  if (!existsSync(entry)) {
    throw new Error(`--against: ${entry} is missing; build that checkout first (pnpm build in ${dir})`);
  }
}
