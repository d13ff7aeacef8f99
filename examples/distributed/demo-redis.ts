/**
 * The Redis the demo's shared row runs on: REDIS_URL when set; else a private `redis-server` on a free
 * loopback port, stopped afterwards; else none, with the reason the row is skipped.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { redisAddress } from '@tollgate/example-support/store';
import { Redis } from 'ioredis';
import type { ResourceStack } from './resource-stack.js';

/** A Redis to use. */
export interface DemoRedis {
  readonly url: string;
  /** For the progress line: where this Redis came from. */
  readonly description: string;
}

/** Why there is no Redis row. */
export interface NoRedis {
  readonly skipped: string;
}

const START_TIMEOUT_MS = 10_000;

/**
 * Finds or starts a Redis for the demo. A private server is added to `started` the moment it is spawned,
 * so it is stopped with everything else. Never throws: without Redis the demo still shows the memory row.
 *
 * @example
 * const redis = await demoRedis(started);
 * if ('skipped' in redis) console.log(redis.skipped);
 */
export async function demoRedis(started: ResourceStack): Promise<DemoRedis | NoRedis> {
  const given = process.env.REDIS_URL;
  if (given) {
    const problem = await pingProblem(given);
    const where = redisAddress(given);
    if (problem) return { skipped: `REDIS_URL (${where}) did not answer PING: ${problem}` };
    return { url: given, description: `REDIS_URL, ${where}` };
  }
  try {
    return await startPrivateRedis(started);
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    if (code === 'ENOENT') {
      return {
        skipped:
          'REDIS_URL is not set and redis-server is not on PATH ' +
          '(set REDIS_URL, or install Redis: apt-get install redis-server, brew install redis)',
      };
    }
    return { skipped: `REDIS_URL is not set and a private redis-server did not start: ${message}` };
  }
}

/** `undefined` when the server answers PING, else what went wrong. */
async function pingProblem(url: string): Promise<string | undefined> {
  // One attempt, no reconnecting: the question is only whether it is there now.
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  // The socket's error says why (ECONNREFUSED, …); connect() itself only says the connection closed.
  let socketError: string | undefined;
  client.on('error', (error: Error) => {
    socketError ??= error.message;
  });
  try {
    await client.connect();
    await client.ping();
    return undefined;
  } catch (error) {
    return socketError ?? (error as Error).message;
  } finally {
    client.disconnect();
  }
}

/** `redis-server` on a free loopback port, keeping nothing on disk. */
async function startPrivateRedis(started: ResourceStack): Promise<DemoRedis> {
  const port = await freeLoopbackPort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const server = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  started.defer(() => stopServer(server));
  await readyToAcceptConnections(server);
  return { url: `redis://127.0.0.1:${port}`, description: `private redis-server on port ${port}` };
}

function readyToAcceptConnections(server: ChildProcess): Promise<void> {
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`not ready within ${START_TIMEOUT_MS} ms`)),
      START_TIMEOUT_MS,
    );
    const settle = (error?: Error) => {
      clearTimeout(timer);
      server.stdout?.removeAllListeners('data').resume(); // keep draining, or a full pipe would block Redis
      server.removeAllListeners('exit');
      if (error) reject(error);
      else resolve();
    };
    server.stdout?.on('data', (chunk: Buffer) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) settle();
    });
    server.stderr?.resume();
    server.once('error', settle);
    server.once('exit', (code) =>
      settle(new Error(`exited with code ${code}: ${output.trim().slice(-300)}`)),
    );
  });
}

async function stopServer(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null || server.pid === undefined) return;
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  server.kill('SIGTERM');
  await exited;
}

/** A port nothing listens on now. Another process could take it before Redis binds; then Redis says so. */
async function freeLoopbackPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', resolve);
  });
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
