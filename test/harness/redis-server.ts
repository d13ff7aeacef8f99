/**
 * Real `redis-server` processes for tests: a single node or a small Cluster (and, through
 * `startRedisProcess`, the TLS server and Sentinels of `tls.ts` and `sentinel.ts`), on free ports,
 * stopped after.
 */
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
  return startRedisProcess(
    (chosenPort, dir) => [
      ...['--port', String(chosenPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      ...['--dir', dir, '--cluster-config-file', `nodes-${chosenPort}.conf`, ...extraArgs],
    ],
    'Ready to accept connections',
    port,
  );
}

/**
 * Starts `redis-server` with the arguments `argsFor` gives for a port and a fresh directory of its own,
 * once it prints `readyLine`: a plain server, a TLS one, a Sentinel. The port is a free loopback one
 * unless `port` is given; another is tried if a process takes it between our probe and Redis's bind.
 */
export async function startRedisProcess(
  argsFor: (port: number, dir: string) => string[] | Promise<string[]>,
  readyLine: string,
  port?: number,
): Promise<RedisProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-redis-'));
  for (let attempt = 1; ; attempt++) {
    const chosenPort = port ?? (await freePort());
    try {
      const child = await spawnRedis(await argsFor(chosenPort, dir), readyLine);
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
      // Another process may take the port between our probe and Redis's bind: try another. Any other
      // failure (a bad argument, TLS not built in) would fail again.
      if (port !== undefined || attempt >= 5 || !String(error).includes('Address already in use')) {
        await rm(dir, { recursive: true, force: true });
        throw error;
      }
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

async function spawnRedis(args: string[], readyLine: string): Promise<ChildProcess> {
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  // Startup errors go to stdout (a port in use) or stderr (a bad argument): keep both for the message.
  const keep = (chunk: string) => {
    output += chunk;
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
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
      if (output.includes(readyLine)) {
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

/** Runs one command with `redis-cli` against the plain (non-TLS) port `port`; its output. */
export async function redisCli(port: number, ...command: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-p', String(port), ...command]);
  return stdout;
}

/** A loopback port nobody listens on, as of now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

/** Resolves once `check` does, asking every 100 ms; fails, naming `what`, after `timeoutMs`. */
export async function waitFor(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
