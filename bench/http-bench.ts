/**
 * The HTTP bench: every framework × variant as its own server process (one app per scenario), Tollgate's
 * variants twice with `--against` (this build's and the other checkout's, where it has the framework's
 * package); a warm-up;
 * then rounds in which every framework × variant × scenario runs once, in a shuffled order, while its
 * process's CPU time and Redis's counters are read before and after. Every run is checked for the answers
 * its scenario must give.
 */
import type { Redis } from 'ioredis';
import { type AppServer, type AppServerSpec, startAppServers } from './app-servers.js';
import {
  CLIENT_HEADER,
  type Framework,
  isTollgate,
  runsScenario,
  SCENARIOS,
  type Scenario,
  VARIANTS,
  type Variant,
  variantLabel,
} from './apps/scenarios.js';
import type { Build } from './built/built-packages.js';
import { processCpuUs } from './cpu.js';
import type { LoadGenerator, LoadResult, LoadSpec } from './load/load-types.js';
import type { BenchConfig } from './options.js';
import { countersBetween, type RedisCounters, redisCounters } from './redis-stats.js';
import { seededRandom, shuffled, sleep } from './stats.js';

/** One run of one variant. */
export interface HttpSample {
  readonly round: number;
  readonly load: LoadResult;
  /** The app server's CPU time during the run, in µs. */
  readonly nodeCpuUs: number;
  /** What Redis did during the run. */
  readonly redis: RedisCounters;
}

/** Every run of one framework × variant × build × scenario. */
export interface CellResult {
  readonly framework: Framework;
  readonly variant: Variant;
  readonly build: Build;
  readonly scenario: Scenario;
  readonly samples: HttpSample[];
}

/** A variant answered what its scenario must not: the bench stops before printing any ratio. */
export class WrongAnswerError extends Error {
  override readonly name = 'WrongAnswerError';
}

/** One framework × variant × scenario: an app of a server process, and the load that goes with it. */
interface Cell {
  readonly server: AppServer;
  readonly scenario: Scenario;
  readonly spec: LoadSpec;
  readonly result: CellResult;
}

/**
 * Runs every cell in every round; `stats` is a Redis connection used only to read counters. A baseline
 * has no DENY cell: the scenario differs from ALLOW on one hot key only in the limiter.
 */
export async function runHttpBench(
  config: BenchConfig,
  redisUrl: string,
  stats: Redis,
  load: LoadGenerator,
): Promise<CellResult[]> {
  const salt = `b${config.seed}`;
  const random = seededRandom(config.seed);
  // The against build's server right after this build's, so the report's rows come in that order.
  const specs = config.frameworks.flatMap((framework) =>
    VARIANTS[framework].flatMap((variant): AppServerSpec[] => [
      { framework, variant, build: 'this' },
      ...(config.againstFrameworks.includes(framework) && isTollgate(variant)
        ? [{ framework, variant, build: 'against' as const }]
        : []),
    ]),
  );
  progress(`starting ${specs.length} app server processes`);
  const servers = await startAppServers(specs, redisUrl, `bench:${salt}:`, config.against);
  try {
    const cells = servers.flatMap((server) =>
      SCENARIOS.filter((s) => runsScenario(server.variant, s)).map((scenario) =>
        makeCell(config, server, scenario, salt),
      ),
    );
    progress(`warming up ${cells.length} variants`);
    for (const cell of cells) await warmUp(config, cell, load);
    for (let round = 1; round <= config.rounds; round++) {
      progress(`round ${round}/${config.rounds}`);
      for (const cell of shuffled(cells, random)) {
        const sample = await measure(cell, stats, load, round);
        checkAnswers(cell, sample.load);
        cell.result.samples.push(sample);
      }
    }
    return cells.map((cell) => cell.result);
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    for (const server of servers) {
      const said = server.stderr().trim();
      if (said)
        progress(`${server.framework} / ${variantLabel(server.variant, server.build)} said:\n${said}`);
    }
  }
}

function makeCell(config: BenchConfig, server: AppServer, scenario: Scenario, salt: string): Cell {
  const { framework, variant, build } = server;
  return {
    server,
    scenario,
    spec: {
      url: server.urls[scenario.name],
      connections: config.connections,
      durationSec: config.roundSec,
      header: CLIENT_HEADER,
      keyPrefix: `${salt}-`,
      keys: scenario.keys,
    },
    result: { framework, variant, build, scenario, samples: [] },
  };
}

/**
 * Warms the JIT up, and has DENY's first refusals. Full runs: one unmeasured run of the load generator on
 * every cell. --quick: such a run only on each server's 10k-keys app (the busiest path), a few requests
 * from this process on its DENY app to spend the limit, and nothing on its hot-key app.
 */
async function warmUp(config: BenchConfig, cell: Cell, load: LoadGenerator): Promise<void> {
  const statuses = new Set<string>();
  if (config.quick && cell.scenario.name !== 'allow-10k') {
    const requests = cell.scenario.expect === 'deny' ? cell.scenario.limit + config.warmupRequests : 0;
    for (const status of await burst(cell.spec, requests)) statuses.add(String(status));
  } else {
    const result = await load.run({ ...cell.spec, durationSec: config.warmupSec });
    for (const status of Object.keys(result.statuses)) statuses.add(status);
    if (result.socketErrors > 0) statuses.add('socket errors');
  }
  const wrong = [...statuses].filter((status) => status !== '200' && status !== '429');
  if (wrong.length > 0) {
    throw new WrongAnswerError(`${describe(cell)} answered ${wrong} in the warm-up\n${cell.server.stderr()}`);
  }
}

/** Sends `requests` requests, 16 at a time, from this process; resolves to the statuses seen. */
async function burst(spec: LoadSpec, requests: number): Promise<Set<number>> {
  let sent = 0;
  const statuses = new Set<number>();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (sent++ < requests) {
        const n = 1 + Math.floor(Math.random() * spec.keys);
        const response = await fetch(spec.url, { headers: { [spec.header]: `${spec.keyPrefix}${n}` } });
        await response.arrayBuffer();
        statuses.add(response.status);
      }
    }),
  );
  return statuses;
}

async function measure(cell: Cell, stats: Redis, load: LoadGenerator, round: number): Promise<HttpSample> {
  const redisBefore = await redisCounters(stats);
  const cpuBefore = processCpuUs(cell.server.pid);
  const result = await load.run(cell.spec);
  await sleep(20); // the requests still in flight when the load stopped finish on this run's account
  const nodeCpuUs = processCpuUs(cell.server.pid) - cpuBefore;
  const redis = countersBetween(redisBefore, await redisCounters(stats));
  return { round, load: result, nodeCpuUs, redis };
}

/**
 * The correctness gate. ALLOW and every baseline: every response 2xx. DENY: every response 429 (the
 * warm-up has already had the first refusals). No socket errors or timeouts anywhere.
 */
function checkAnswers(cell: Cell, result: LoadResult): void {
  const wantDenial = cell.scenario.expect === 'deny' && cell.server.variant !== 'none';
  const counted = Object.entries(result.statuses).reduce((sum, [, count]) => sum + count, 0);
  const right = Object.entries(result.statuses)
    .filter(([status]) => (wantDenial ? status === '429' : status.startsWith('2')))
    .reduce((sum, [, count]) => sum + count, 0);
  const problems: string[] = [];
  if (result.requests === 0) problems.push('no responses');
  if (result.socketErrors > 0) problems.push(`${result.socketErrors} socket errors or timeouts`);
  if (right !== result.requests || counted !== result.requests) {
    problems.push(
      `expected every response ${wantDenial ? '429' : '2xx'}; got ${JSON.stringify(result.statuses)}`,
    );
  }
  if (problems.length > 0) {
    const stderr = cell.server.stderr().trim();
    throw new WrongAnswerError(`${describe(cell)}: ${problems.join('; ')}${stderr ? `\n${stderr}` : ''}`);
  }
}

function describe({ server, scenario }: Cell): string {
  return `${server.framework} / ${variantLabel(server.variant, server.build)} / ${scenario.title}`;
}

function progress(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}
