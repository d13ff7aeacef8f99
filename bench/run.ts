/**
 * `pnpm bench [--quick]`: Tollgate beside its peers on Express, Fastify, Koa, Hono and NestJS (on Express),
 * on the same machine and the same Redis, each framework also without a limiter as its baseline; then
 * core-only rows without HTTP. `pnpm bench --redis-cost`: what a check costs Redis, alone (redis-cost/).
 * Prints Markdown tables of ratios and per-request costs. Starts its own redis-server (it reads that
 * server's CPU and command counters, so it must be the bench's alone). Options: see `options.ts`.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { compareBuilds, describeCheckout } from './against.js';
import { BUILT_PACKAGES } from './built/built-packages.js';
import { CORE_RESULT_PREFIX, type CoreResults } from './core/core-results.js';
import { CAN_PIN, LOAD_CORE, pinnedCommand, pinProcess, SERVER_CORE } from './cpu.js';
import { type CellResult, runHttpBench, WrongAnswerError } from './http-bench.js';
import { checkGoals, summarize } from './http-summary.js';
import { chooseLoadGenerator } from './load/load-generator.js';
import { type BenchConfig, parseConfig } from './options.js';
import { redisCostReport, runRedisCost } from './redis-cost/redis-cost.js';
import { startRedisServer } from './redis-server.js';
import { againstTable, contextLines, coreTables, goalTable, httpTables } from './report.js';

const CORE_ENTRY = fileURLToPath(new URL('./core/core-bench.ts', import.meta.url));
const BENCH_DIR = fileURLToPath(new URL('.', import.meta.url));

async function main(): Promise<void> {
  const config = parseConfig(process.argv.slice(2));
  if (config.redisCost) {
    // Counted, not timed: no pinning, and its own servers.
    const redisCost = await runRedisCost();
    console.log(redisCostReport(redisCost));
    if (config.json) await writeFile(config.json, JSON.stringify({ config, redisCost }, null, 1));
    return;
  }
  pinProcess(process.pid, LOAD_CORE);
  const redisServer = await startRedisServer();
  const stats = new Redis(redisServer.url);
  try {
    const info = String(await stats.call('INFO', 'server'));
    pinProcess(Number(/^process_id:(\d+)/m.exec(info)?.[1]), LOAD_CORE);
    const load = chooseLoadGenerator(config.load);
    const loadAtStart = loadavg()[0] as number;
    const raw: { config: BenchConfig; http?: CellResult[]; core?: CoreResults } = { config };
    const sections: string[] = [];
    if (config.http) {
      raw.http = await runHttpBench(config, redisServer.url, stats, load);
      const rows = summarize(raw.http);
      sections.push(`### HTTP\n\n${httpTables(rows)}`);
      if (config.against !== undefined) {
        const ratios = compareBuilds(raw.http);
        const parts = [...(ratios.length > 0 ? [againstTable(ratios)] : []), ...againstNote(config)];
        sections.push(
          `### This build ÷ the --against build (medians of per-round ratios, range)\n\n${parts.join('\n\n')}`,
        );
      }
      sections.push(`### Goals\n\n${goalTable(checkGoals(rows))}`);
    }
    if (config.core) {
      raw.core = await runCoreBench(config, redisServer.url);
      sections.push(`### Core, without HTTP\n\n${coreTables(raw.core)}`);
    }
    const context = contextLines({
      date: new Date().toISOString().slice(0, 10),
      node: process.versions.node,
      redis: /^redis_version:(\S+)/m.exec(info)?.[1] ?? '?',
      load: load.name,
      pinned: CAN_PIN,
      quick: config.quick,
      rounds: config.rounds,
      roundSec: config.roundSec,
      connections: config.connections,
      seed: config.seed,
      loadAverages: [loadAtStart, loadavg()[0] as number],
      builds:
        config.against === undefined
          ? undefined
          : { this: describeCheckout(dirname(BENCH_DIR)), against: describeCheckout(config.against) },
    });
    // Printed at the end, all at once: the progress lines on stderr do not break up the tables.
    console.log(['## Tollgate bench', context, ...sections].join('\n\n'));
    if (config.json) await writeFile(config.json, JSON.stringify(raw, null, 1));
  } finally {
    stats.disconnect();
    await redisServer.stop();
  }
}

/** A note naming the frameworks of the run that the `--against` checkout has no adapter for, if any. */
function againstNote({ frameworks, againstFrameworks }: BenchConfig): string[] {
  const missing = frameworks.filter((framework) => !againstFrameworks.includes(framework));
  return missing.length === 0
    ? []
    : [
        `No --against rows for ${missing.join(', ')}: that checkout has no ` +
          `${missing.map((framework) => `packages/${framework}`).join(', ')}.`,
      ];
}

/** Runs the core-only rows in a child pinned to the server core, with --expose-gc for the heap row. */
async function runCoreBench(config: BenchConfig, redisUrl: string): Promise<CoreResults> {
  process.stderr.write('[bench] core rows (no HTTP)\n');
  const nodeArgs = [
    '--expose-gc',
    '--import',
    'tsx',
    '--import',
    BUILT_PACKAGES,
    CORE_ENTRY,
    redisUrl,
    JSON.stringify(config),
  ];
  const [command, args] = pinnedCommand(SERVER_CORE, process.execPath, nodeArgs);
  const child = spawn(command, args, { cwd: BENCH_DIR, stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  const code = await new Promise((resolve) => child.once('exit', resolve));
  const line = stdout.split('\n').find((l) => l.startsWith(CORE_RESULT_PREFIX));
  if (code !== 0 || line === undefined) throw new Error(`the core bench failed (exit ${code}):\n${stdout}`);
  return JSON.parse(line.slice(CORE_RESULT_PREFIX.length)) as CoreResults;
}

try {
  await main();
} catch (error) {
  if (error instanceof WrongAnswerError) {
    console.error(
      `\nBENCH FAILED: a variant answered wrongly, so no figure of this run is valid.\n${error.message}`,
    );
  } else {
    console.error(error);
  }
  process.exitCode = 1;
}
