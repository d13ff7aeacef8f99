/** The bench's own `redis-server`: one node on a free loopback port, nothing on disk, stopped after. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A running Redis the bench started; `stop` ends it and removes its folder. */
export interface BenchRedisServer {
  readonly url: string;
  /** The server's process (valgrind's, when it runs under valgrind). */
  readonly pid: number;
  /** The server's own folder, removed by `stop`. */
  readonly dir: string;
  stop(): Promise<void>;
}

/** How to start the server. */
export interface RedisServerOptions {
  /**
   * Words run before `redis-server`, given the server's folder: a tool it runs under, such as valgrind.
   * Default: none.
   */
  readonly wrapper?: (dir: string) => readonly string[];
  /** More `redis-server` options, such as `['--enable-debug-command', 'local']`. Default: none. */
  readonly args?: readonly string[];
}

/**
 * Starts `redis-server` for the bench alone: the bench reads its CPU and command counters, so no other
 * client may share it (a server of the user's own is never used).
 */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<BenchRedisServer> {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-bench-redis-'));
  const wrapper = options.wrapper?.(dir) ?? [];
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      const child = await spawnRedis(port, dir, wrapper, options.args ?? []);
      return {
        url: `redis://127.0.0.1:${port}`,
        pid: child.pid as number,
        dir,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) {
            const exited = new Promise((resolve) => child.once('exit', resolve));
            child.kill('SIGTERM');
            await exited;
          }
          await rm(dir, { recursive: true, force: true });
        },
      };
    } catch (error) {
      // Another process may take the port between our probe and Redis's bind: try another.
      if (attempt >= 5) {
        await rm(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }
}

async function spawnRedis(
  port: number,
  dir: string,
  wrapper: readonly string[],
  extra: readonly string[],
): Promise<ChildProcess> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extra];
  const [command = 'redis-server', ...rest] = [...wrapper, 'redis-server', ...args, '--dir', dir];
  const child = spawn(command, rest, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.once('error', (error) =>
      reject(new Error(`cannot start ${command} (apt-get install ${command}): ${error.message}`)),
    );
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}:\n${output}`)));
    child.stdout?.on('data', function onData(chunk) {
      output += chunk;
      if (!output.includes('Ready to accept connections')) return;
      child.stdout?.off('data', onData);
      resolve();
    });
  });
  child.removeAllListeners('exit');
  child.stdout?.resume();
  child.stderr?.resume();
  return child;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}
