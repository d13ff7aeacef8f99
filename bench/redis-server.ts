/** The bench's own `redis-server`: one node on a free loopback port, nothing on disk, stopped after. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A running Redis the bench started; `stop` ends it and removes its folder. */
export interface BenchRedisServer {
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * Starts `redis-server` for the bench alone: the bench reads its CPU and command counters, so no other
 * client may share it (a server of the user's own is never used).
 */
export async function startRedisServer(): Promise<BenchRedisServer> {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-bench-redis-'));
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      const child = await spawnRedis(port, dir);
      return {
        url: `redis://127.0.0.1:${port}`,
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

async function spawnRedis(port: number, dir: string): Promise<ChildProcess> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const child = spawn('redis-server', [...args, '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.once('error', (error) =>
      reject(new Error(`cannot start redis-server (apt-get install redis-server): ${error.message}`)),
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
