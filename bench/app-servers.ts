/**
 * Starts and stops the bench's app server processes: one per framework × variant × build, each on the
 * server core.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Framework, ScenarioName, Variant } from './apps/scenarios.js';
import { BUILT_PACKAGES, type Build, builtPackagesEnv } from './built/built-packages.js';
import { pinProcess, SERVER_CORE } from './cpu.js';

const SERVER_ENTRY = fileURLToPath(new URL('./apps/server.ts', import.meta.url));
const BENCH_DIR = fileURLToPath(new URL('.', import.meta.url));

/** A running app server process, with one app per scenario. */
export interface AppServer {
  readonly framework: Framework;
  readonly variant: Variant;
  readonly build: Build;
  readonly pid: number;
  readonly urls: Readonly<Record<ScenarioName, string>>;
  /** What the process printed on stderr so far (warnings, Redis errors). */
  stderr(): string;
  stop(): Promise<void>;
}

/** What one server runs. */
export interface AppServerSpec {
  readonly framework: Framework;
  readonly variant: Variant;
  readonly build: Build;
}

/**
 * Starts the servers all at once, on any core (starting is not measured, and tsx's compiling is the
 * slow part), then pins each to the server core once it listens. A server of the `against` build loads
 * Tollgate from the checkout `against` and keeps its Redis keys apart from this build's.
 */
export async function startAppServers(
  specs: readonly AppServerSpec[],
  redisUrl: string,
  keyPrefix: string,
  against: string | undefined,
): Promise<AppServer[]> {
  const started = await Promise.allSettled(
    specs.map((spec) =>
      spec.build === 'against'
        ? startAppServer(spec, redisUrl, `${keyPrefix}against:`, against)
        : startAppServer(spec, redisUrl, keyPrefix, undefined),
    ),
  );
  const servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await Promise.all(servers.map((server) => server.stop()));
    throw failed.reason;
  }
  for (const server of servers) pinProcess(server.pid, SERVER_CORE);
  return servers;
}

async function startAppServer(
  { framework, variant, build }: AppServerSpec,
  redisUrl: string,
  keyPrefix: string,
  checkout: string | undefined,
): Promise<AppServer> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', BUILT_PACKAGES, SERVER_ENTRY, framework, variant, redisUrl, keyPrefix],
    {
      cwd: BENCH_DIR,
      env: { ...builtPackagesEnv(checkout), NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const ports = await firstLine(child, () => stderr, `${framework} ${variant} (${build} build)`);
  const urls = Object.fromEntries(
    Object.entries(JSON.parse(ports) as Record<string, number>).map(([name, port]) => [
      name,
      `http://127.0.0.1:${port}/`,
    ]),
  ) as Record<ScenarioName, string>;
  return {
    framework,
    variant,
    build,
    pid: child.pid as number,
    urls,
    stderr: () => stderr,
    stop: () => stopChild(child),
  };
}

/**
 * A server that has not said its ports by then is stuck: the bench stops rather than wait for ever. All of
 * them start at once, on two cores: 32 servers of five frameworks took 34 s with `--against`.
 */
const STARTUP_TIMEOUT_MS = 120_000;

function firstLine(child: ChildProcess, stderr: () => string, what: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let output = '';
    const stuck = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`app server ${what} did not start in ${STARTUP_TIMEOUT_MS / 1000} s:\n${stderr()}`));
    }, STARTUP_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (!output.includes('\n')) return;
      clearTimeout(stuck);
      child.stdout?.off('data', onData);
      child.stdout?.resume();
      resolve(output.trim());
    };
    child.stdout?.on('data', onData);
    child.once('error', (error) => {
      clearTimeout(stuck);
      reject(error);
    });
    child.once('exit', (code) => {
      clearTimeout(stuck);
      reject(new Error(`app server ${what} exited with ${code}:\n${stderr()}`));
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
