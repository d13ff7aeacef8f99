/** One `next start` process of a built app, on a port the system picks, until the test stops it. */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { NEXT_BIN, NEXT_ENV } from './assemble.js';

/** A running `next start`. */
export interface NextServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
  /** Resolves once its output matches `pattern`; rejects after `timeoutMs` with the output so far. */
  untilOutput(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** Ends the process and whatever it started; resolves once it has exited. */
  stop(): Promise<void>;
}

/** How long a start may take on a slow, shared machine. */
const START_TIMEOUT_MS = 60_000;
/** `next start` prints the port it was given, and with `--port 0` the one it got. */
const LISTENING = /Local:\s+http:\/\/127\.0\.0\.1:(\d+)/;

/**
 * Starts `next start` in `dir` on 127.0.0.1, as the example's `pnpm start` serves it, with `env` added to
 * the environment. Resolves once it answers HTTP.
 */
export async function startNext(dir: string, env: Readonly<Record<string, string>>): Promise<NextServer> {
  // Its own process group, so that stop() ends anything it spawned too.
  const child = spawn(process.execPath, [NEXT_BIN, 'start', '--hostname', '127.0.0.1', '--port', '0'], {
    cwd: dir,
    env: { ...NEXT_ENV, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const waiters = new Set<() => void>();
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    for (const waiter of waiters) waiter();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  child.on('exit', () => {
    for (const waiter of waiters) waiter();
  });

  function untilOutput(pattern: RegExp, timeoutMs = START_TIMEOUT_MS): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (pattern.test(output)) return done(resolve);
        if (child.exitCode !== null || child.signalCode !== null) {
          done(() => reject(new Error(`next start exited before printing ${pattern}:\n${output}`)));
        }
      };
      const timer = setTimeout(
        () => done(() => reject(new Error(`no ${pattern} in ${timeoutMs} ms from next start:\n${output}`))),
        timeoutMs,
      );
      const done = (settle: () => void) => {
        clearTimeout(timer);
        waiters.delete(check);
        settle();
      };
      waiters.add(check);
      check();
    });
  }

  const server: NextServer = {
    url: '',
    output: () => output,
    untilOutput,
    stop: () => stop(child),
  };
  try {
    await untilOutput(LISTENING);
    const url = `http://127.0.0.1:${LISTENING.exec(output)?.[1]}`;
    await untilAnswering(url, child);
    return { ...server, url };
  } catch (error) {
    await stop(child);
    throw error;
  }
}

/** Polls until the server answers any HTTP request: it may print its address before it accepts. */
async function untilAnswering(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    try {
      await fetch(`${url}/favicon.ico`, { signal: AbortSignal.timeout(5_000) });
      return;
    } catch (error) {
      if (child.exitCode !== null || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = once(child, 'exit');
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-(child.pid as number), name);
    } catch {
      // Already gone.
    }
  };
  signal('SIGTERM');
  const timer = setTimeout(() => signal('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
