/**
 * workerd for the suites: Workers bundled into one module each, and `workerd serve` started on free ports,
 * as the registry's `workerd` package installs it, and stopped after.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { build } from 'esbuild';
import workerdBinary from 'workerd';

/** A running `workerd serve`: the port of each socket of its config, by name. */
export interface Workerd {
  readonly ports: Readonly<Record<string, number>>;
  /** What it wrote to stderr so far (`--verbose`: uncaught errors, `console` output). */
  log(): string;
  stop(): Promise<void>;
}

/** How long workerd may take to bundle and listen on a slow, shared machine. */
const START_TIMEOUT_MS = 30_000;

/**
 * Bundles `entry` into one ES module for workerd, as a `.capnp` config embeds it. The packages'
 * CommonJS `require()` of Node.js built-ins (ioredis's, node-redis's) goes through `createRequire`,
 * which workerd provides with `nodejs_compat`; esbuild's own `require` would throw in an ES module.
 */
export async function bundleWorker(entry: string, outfile: string): Promise<void> {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'es2023',
    logLevel: 'warning',
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
  });
}

/**
 * Starts `workerd serve config ...args` in `cwd` and resolves once each socket of `sockets` listens
 * (its config gives them port 0: workerd reports the ports it took on `--control-fd`). `env` adds to
 * the environment (`fromEnvironment` bindings).
 */
export async function startWorkerd(options: {
  readonly config: string;
  readonly cwd: string;
  readonly sockets: readonly string[];
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}): Promise<Workerd> {
  const { config, cwd, sockets, args = [], env = {} } = options;
  const child = spawn(workerdBinary, ['serve', config, '--verbose', '--control-fd=3', ...args], {
    cwd,
    env: { ...process.env, PWD: cwd, ...env }, // PWD: workerd notes a stale one on every start
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const stop = () => stopProcess(child);
  try {
    const ports = await listening(child, sockets, () => stderr);
    return { ports, log: () => stderr, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The ports workerd reports for `sockets` (`{"event":"listen","socket":…,"port":…}` lines on fd 3). */
function listening(
  child: ChildProcess,
  sockets: readonly string[],
  stderr: () => string,
): Promise<Record<string, number>> {
  const ports: Record<string, number> = {};
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      reject(new Error(`workerd ${why}; its stderr:\n${stderr()}`));
    };
    const timer = setTimeout(() => fail(`did not listen within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
    child.once('error', (error) => fail(`could not start (${error.message})`));
    child.once('exit', (code, signal) => fail(`exited (${signal ?? code}) before listening`));
    createInterface({ input: child.stdio[3] as Readable }).on('line', (line) => {
      const event = parsed(line);
      if (event?.event !== 'listen' || event.socket === undefined || event.port === undefined) return;
      ports[event.socket] = event.port;
      if (sockets.every((socket) => socket in ports)) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve(ports);
      }
    });
  });
}

/** A control line of workerd's, or `undefined` for one that is not JSON. */
function parsed(line: string): { event?: string; socket?: string; port?: number } | undefined {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** Ends `child` (SIGTERM, then SIGKILL if it lingers) and waits for it to exit. */
async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const lingering = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(lingering);
}
