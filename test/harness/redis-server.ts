/** Real `redis-server` processes for tests: a single node or a small Cluster, on free ports, stopped after. */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A running Redis we started; `stop` ends it and removes its files. */
export interface RedisProcess {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  stop(): Promise<void>;
  /** Ends it at once, as a crash would (SIGKILL): no goodbye to its clients. */
  kill(): Promise<void>;
}

/** A running Redis Cluster of several masters. */
export interface RedisClusterProcess {
  readonly nodes: readonly { host: string; port: number }[];
  stop(): Promise<void>;
}

/**
 * Starts `redis-server` on a free loopback port (or on `port`, to bring a stopped one back), keeping
 * nothing on disk.
 */
export async function startRedisServer(extraArgs: string[] = [], port?: number): Promise<RedisProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-redis-'));
  for (let attempt = 1; ; attempt++) {
    const chosenPort = port ?? (await freePort());
    try {
      const child = await spawnRedis(chosenPort, dir, extraArgs);
      return {
        host: '127.0.0.1',
        port: chosenPort,
        url: `redis://127.0.0.1:${chosenPort}`,
        async stop() {
          await stopChild(child);
          await rm(dir, { recursive: true, force: true });
        },
        async kill() {
          await stopChild(child, 'SIGKILL');
          await rm(dir, { recursive: true, force: true });
        },
      };
    } catch (error) {
      // Another process may take the port between our probe and Redis's bind: try another.
      if (port !== undefined || attempt >= 5) throw error;
    }
  }
}

/** Starts `masters` cluster-enabled servers and joins them into one Cluster covering all slots. */
export async function startRedisCluster(masters = 3): Promise<RedisClusterProcess> {
  const servers: RedisProcess[] = [];
  try {
    for (let i = 0; i < masters; i++) {
      servers.push(await startRedisServer(['--cluster-enabled', 'yes', '--cluster-node-timeout', '5000']));
    }
    const addresses = servers.map((s) => `${s.host}:${s.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes']);
    await waitFor(async () => {
      const states = await Promise.all(servers.map((s) => redisCli(s.port, 'CLUSTER', 'INFO')));
      return states.every((info) => info.includes('cluster_state:ok'));
    }, 'the Redis Cluster to report cluster_state:ok');
  } catch (error) {
    await Promise.all(servers.map((s) => s.stop()));
    throw error;
  }
  return {
    nodes: servers.map(({ host, port }) => ({ host, port })),
    async stop() {
      await Promise.all(servers.map((s) => s.stop()));
    },
  };
}

async function spawnRedis(port: number, dir: string, extraArgs: string[]): Promise<ChildProcess> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  args.push('--dir', dir, '--cluster-config-file', `nodes-${port}.conf`, ...extraArgs);
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  await new Promise<void>((resolve, reject) => {
    child.once('error', (error) =>
      reject(
        new Error(
          `cannot start redis-server (is it installed? apt-get install redis-server): ${error.message}`,
        ),
      ),
    );
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}:\n${output}`)));
    const onData = () => {
      if (output.includes('Ready to accept connections')) {
        child.stdout?.off('data', onData);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
  });
  child.removeAllListeners('exit');
  child.stdout?.resume();
  return child;
}

async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}

/**
 * How many times the server at `port` ran each command since it started (`INFO commandstats`), by
 * lower-case name: `{ evalsha: 12, get: 3 }`.
 */
export async function commandCounts(port: number): Promise<Record<string, number>> {
  const info = await redisCli(port, 'INFO', 'commandstats');
  const counts: Record<string, number> = {};
  for (const [, name, calls] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    counts[name as string] = Number(calls);
  }
  return counts;
}

async function redisCli(port: number, ...command: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-p', String(port), ...command]);
  return stdout;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
