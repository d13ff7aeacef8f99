/**
 * Bun and Deno as the registry's packages install them, and the servers the suites start with them: a
 * process that prints `listening on <url>` once it takes requests, and is stopped after.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
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
  stderr(): string;
  stop(): Promise<void>;
}

/**
 * Starts `args` of `binary` in `cwd` and resolves once it printed `listening on <url>`; rejects, with its
 * output, if it exits first or takes longer than `timeoutMs` (a slow machine starts a runtime slowly).
 *
 * @example
 * const server = await startServer(bun.binary, bun.runArgs('bun-server.ts'), { cwd, env: runtimeEnv() });
 */
export async function startServer(
  binary: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<ServerProcess> {
  const child = spawn(binary, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    stdout += text;
  });
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
  });
  const url = await new Promise<string>((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${binary} ${args.join(' ')}: ${why}\nstdout: ${stdout}\nstderr: ${stderr}`));
    };
    const timer = setTimeout(() => fail('no "listening on" line in time'), options.timeoutMs ?? 30_000);
    child.stdout.on('data', () => {
      const listening = /listening on (http:\/\/\S+?)\/?\s/.exec(stdout);
      if (listening?.[1] === undefined) return;
      clearTimeout(timer);
      resolve(listening[1]);
    });
    child.once('exit', (code, signal) => fail(`exited (${signal ?? code}) before listening`));
    child.once('error', (error) => fail(error.message));
  });
  return { url, stderr: () => stderr, stop: () => stopProcess(child) };
}

/** SIGTERM, and SIGKILL if it has not exited 5 s later. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}
