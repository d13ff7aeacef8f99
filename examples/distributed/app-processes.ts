/** Starting and stopping the app processes: each a child running `app-server.ts`, ready once it listens. */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ReadyMessage } from './app-server.js';

/** An app process, from the moment it is forked. */
export interface AppProcess {
  /** The port it listens on, once it does; rejects if it exits or takes too long first. */
  readonly ready: Promise<number>;
  /** Stops the process: SIGTERM, then SIGKILL if it has not exited within a few seconds. */
  stop(): Promise<void>;
}

const APP_SERVER = fileURLToPath(new URL('./app-server.ts', import.meta.url));
const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;

/**
 * Forks one app process. `redisUrl` undefined means a MemoryStore of its own. Returns at once, so the
 * caller can record how to stop it before waiting for `ready`.
 *
 * @example
 * const app = startAppProcess({ limiterName: 'demo-1', redisUrl: undefined });
 * started.defer(app.stop);
 * const port = await app.ready;
 */
export function startAppProcess(options: { limiterName: string; redisUrl: string | undefined }): AppProcess {
  // fork() passes on this process's Node options, tsx's loader among them, so the child runs TypeScript.
  const child = fork(APP_SERVER, {
    env: { ...process.env, LIMITER_NAME: options.limiterName, REDIS_URL: options.redisUrl ?? '' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return { ready: readyPort(child), stop: () => stopChild(child) };
}

function readyPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`an app process did not start within ${START_TIMEOUT_MS} ms`)),
      START_TIMEOUT_MS,
    );
    child.on('message', (message: Partial<ReadyMessage>) => {
      if (typeof message?.readyOnPort !== 'number') return;
      clearTimeout(timer);
      resolve(message.readyOnPort);
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`an app process exited before it was ready (${signal ?? `code ${code}`})`));
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(killer);
}
