/**
 * Bun and Deno as the registry's packages install them, and the servers the suites start with them: a
 * process that prints `listening on <url>` once it takes requests, and is stopped after.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { type AddressInfo, createServer } from 'node:net';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** A runtime, and how to run a TypeScript file with it. */
export interface Runtime {
  readonly name: 'Bun' | 'Deno';
  /** The binary the registry's package ships. */
  readonly binary: string;
  /** The arguments that run `file` (in a project with a node_modules folder). */
  runArgs(file: string): string[];
}

/** The binary inside an installed package, without the package manager's shim around it. */
const binaryOf = (name: string, path: string) => join(dirname(require.resolve(`${name}/package.json`)), path);

export const bun: Runtime = {
  name: 'Bun',
  binary: binaryOf('bun', 'bin/bun.exe'),
  runArgs: (file) => [file],
};

export const deno: Runtime = {
  name: 'Deno',
  binary: binaryOf('deno', 'deno'),
  // Deno reads packages from node_modules as npm installed them; the app needs the network (its server,
  // Redis) and its environment (its settings), nothing else.
  runArgs: (file) => ['run', '--node-modules-dir=manual', '--allow-net', '--allow-env', file],
};

/** The environment a runtime process is given: no update checks, no prompts, no telemetry. */
export function runtimeEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DENO_NO_UPDATE_CHECK: '1',
    DENO_NO_PROMPT: '1',
    DO_NOT_TRACK: '1',
    NO_COLOR: '1',
    ...extra,
  };
}

/** A server process: its base URL, what it wrote to stderr so far, and how to stop it. */
export interface ServerProcess {
  readonly url: string;
  /** What it printed on stdout so far. */
  stdout(): string;
  stderr(): string;
  stop(): Promise<void>;
}

/** How to start a server, and how to know it takes requests. */
export interface ServerOptions {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** The line that gives its base URL, in its first group. Default: `listening on <url>`. */
  readonly ready?: RegExp;
  /** A slow machine starts a runtime slowly. Default: 30 s. */
  readonly timeoutMs?: number;
}

/**
 * Starts `args` of `binary` in `cwd`, in a process group of its own (a package manager's script runs the
 * server in a child process, which is stopped with it), and resolves once it printed its ready line;
 * rejects, with its output, if it exits first or takes too long.
 *
 * @example
 * const server = await startServer(bun.binary, bun.runArgs('bun-server.ts'), { cwd, env: runtimeEnv() });
 */
export async function startServer(
  binary: string,
  args: string[],
  options: ServerOptions,
): Promise<ServerProcess> {
  const ready = options.ready ?? /listening on (http:\/\/\S+?)\/?\s/;
  const child = spawn(binary, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    stdout += text;
  });
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
  });
  const stop = () => stopGroup(child);
  const url = await new Promise<string>((resolve, reject) => {
    const fail = (why: string) => {
      cleanUp();
      reject(new Error(`${binary} ${args.join(' ')}: ${why}\nstdout: ${stdout}\nstderr: ${stderr}`));
      void stop();
    };
    const timer = setTimeout(() => fail('no ready line in time'), options.timeoutMs ?? 30_000);
    const onData = () => {
      const url = ready.exec(stdout)?.[1];
      if (url === undefined) return;
      cleanUp();
      resolve(url);
    };
    const onExit = (code: number | null, signal: string | null) =>
      fail(`exited (${signal ?? code}) before it was ready`);
    const onError = (error: Error) => fail(error.message);
    const cleanUp = () => {
      clearTimeout(timer);
      child.stdout.off('data', onData);
      child.off('exit', onExit).off('error', onError);
    };
    child.stdout.on('data', onData);
    child.once('exit', onExit).once('error', onError);
  });
  return { url, stdout: () => stdout, stderr: () => stderr, stop };
}

/** SIGTERM to the child's process group, and SIGKILL to what is left of it 5 s later. */
async function stopGroup(child: ChildProcess): Promise<void> {
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-(child.pid as number), signal);
    } catch {
      // ESRCH: nothing of the group is left.
    }
  };
  if (child.pid === undefined) return;
  const running = child.exitCode === null && child.signalCode === null;
  const exited = running ? new Promise((resolve) => child.once('exit', resolve)) : Promise.resolve();
  signalGroup('SIGTERM');
  const timer = setTimeout(() => signalGroup('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
  // The leader may exit before the server it started (a package manager's script): none is left behind.
  signalGroup('SIGKILL');
}

/** A TCP port of 127.0.0.1 that was free a moment ago, for a server that cannot be given port 0. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
