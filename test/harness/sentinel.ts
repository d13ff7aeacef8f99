/**
 * A Redis Sentinel set for tests: a master, one replica and three sentinels on free loopback ports,
 * nothing on disk, tuned to fail over in seconds. Each test that kills a node starts its own.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  freePort,
  type RedisProcess,
  redisCli,
  startRedisProcess,
  startRedisServer,
  waitFor,
} from './redis-server.js';

/** A host and port. */
export interface Address {
  readonly host: string;
  readonly port: number;
}

/** A running Sentinel set: what clients connect through, and the servers, to kill or ask. */
export interface SentinelSet {
  /** The name the sentinels monitor the master under (ioredis's `name`, node-redis's `name`). */
  readonly name: string;
  readonly sentinels: readonly Address[];
  /** The master the set started with, and its replica (the master after a failover). */
  readonly master: RedisProcess;
  readonly replica: RedisProcess;
  /** The master's address, as the first sentinel reports it. */
  masterAddress(): Promise<Address>;
  /** Resolves once every sentinel reports `address` as the master: the failover to it is done. */
  untilMasterIs(address: Address, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** How fast the set notices a dead master and fails over. */
export interface SentinelTimings {
  /** How long a master may not answer before a sentinel thinks it down. Default: 500 ms. */
  readonly downAfterMs?: number;
  /**
   * How long a failover may take before it is tried again (after twice this). Default: 3,000 ms: the
   * promotion itself takes about a second, as sentinels look at a promoted replica once a second.
   */
  readonly failoverTimeoutMs?: number;
}

/**
 * Starts a master, a replica of it (synchronised), and three sentinels that already know each other and
 * the replica (written into their configuration, so there is no discovery to wait for): a failover can
 * be agreed on (quorum 2) as soon as this resolves.
 */
export async function startSentinelSet(timings: SentinelTimings = {}): Promise<SentinelSet> {
  const name = 'tollgate';
  const started: RedisProcess[] = [];
  try {
    // No delay before a full sync: Redis 7 waits 5 s for more replicas to share a diskless one.
    const quickSync = ['--repl-diskless-sync-delay', '0'];
    const master = await startRedisServer(quickSync);
    started.push(master);
    const replica = await startRedisServer([...quickSync, '--replicaof', master.host, String(master.port)]);
    started.push(replica);
    await waitFor(
      async () => (await redisCli(replica.port, 'INFO', 'replication')).includes('master_link_status:up'),
      'the replica to sync with its master',
    );
    const sentinels = await startSentinels(name, master, replica, timings);
    started.push(...sentinels);
    const set = sentinelSet(name, master, replica, sentinels);
    await set.untilMasterIs(master);
    await waitFor(
      () => everySentinel(sentinels, async (port) => readyToFailOver(port, name)),
      'the sentinels to see the replica and each other',
    );
    return set;
  } catch (error) {
    await Promise.all(started.map((s) => s.stop()));
    throw error;
  }
}

/**
 * Three sentinels of `master`, each told of the others' ports and ids, so each needs its port chosen
 * before any starts: if one is taken meanwhile, all are started again on new ports.
 */
async function startSentinels(
  name: string,
  master: RedisProcess,
  replica: RedisProcess,
  timings: SentinelTimings,
): Promise<RedisProcess[]> {
  for (let attempt = 1; ; attempt++) {
    const peers = await Promise.all(
      [1, 2, 3].map(async () => ({ port: await freePort(), id: randomBytes(20).toString('hex') })),
    );
    const starting = peers.map((self) =>
      startRedisProcess(
        async (port, dir) => {
          const file = join(dir, 'sentinel.conf');
          await writeFile(file, sentinelConfig(name, self, peers, master, replica, timings));
          return [file, '--sentinel', '--port', String(port), '--bind', '127.0.0.1', '--dir', dir];
        },
        'Sentinel ID is',
        self.port,
      ),
    );
    const results = await Promise.allSettled(starting);
    const sentinels = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = results.find((r) => r.status === 'rejected');
    if (failed === undefined) return sentinels;
    await Promise.all(sentinels.map((s) => s.stop()));
    if (attempt >= 3 || !String(failed.reason).includes('Address already in use')) throw failed.reason;
  }
}

function sentinelSet(
  name: string,
  master: RedisProcess,
  replica: RedisProcess,
  sentinels: RedisProcess[],
): SentinelSet {
  const masterOf = async (port: number): Promise<Address> => {
    const [host = '', masterPort = ''] = (
      await redisCli(port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)
    ).split('\n');
    return { host, port: Number(masterPort) };
  };
  return {
    name,
    sentinels: sentinels.map(({ host, port }) => ({ host, port })),
    master,
    replica,
    masterAddress: () => masterOf(sentinels[0]?.port ?? 0),
    async untilMasterIs(address, timeoutMs = 20_000) {
      await waitFor(
        () =>
          everySentinel(sentinels, async (port) => {
            const reported = await masterOf(port);
            return reported.host === address.host && reported.port === address.port;
          }),
        `every sentinel to report ${address.host}:${address.port} as the master`,
        timeoutMs,
      );
    },
    async stop() {
      await Promise.all([master, replica, ...sentinels].map((s) => s.stop()));
    },
  };
}

/**
 * A sentinel's configuration. `known-sentinel` and `known-replica` are what a sentinel writes itself
 * once it has discovered them (through hello messages every 2 s, and the master's INFO every 10 s):
 * written here, they cost no wait.
 */
function sentinelConfig(
  name: string,
  self: { port: number; id: string },
  peers: readonly { port: number; id: string }[],
  master: RedisProcess,
  replica: RedisProcess,
  { downAfterMs = 500, failoverTimeoutMs = 3_000 }: SentinelTimings,
): string {
  const lines = [
    `sentinel myid ${self.id}`,
    `sentinel monitor ${name} ${master.host} ${master.port} 2`,
    `sentinel down-after-milliseconds ${name} ${downAfterMs}`,
    `sentinel failover-timeout ${name} ${failoverTimeoutMs}`,
    `sentinel parallel-syncs ${name} 1`,
    `sentinel known-replica ${name} ${replica.host} ${replica.port}`,
    ...peers
      .filter((peer) => peer !== self)
      .map((peer) => `sentinel known-sentinel ${name} 127.0.0.1 ${peer.port} ${peer.id}`),
  ];
  return `${lines.join('\n')}\n`;
}

/** Whether a sentinel sees the replica (linked to its master) and could reach a quorum and a majority. */
async function readyToFailOver(port: number, name: string): Promise<boolean> {
  const quorum = await redisCli(port, 'SENTINEL', 'CKQUORUM', name);
  const replicas = await redisCli(port, 'SENTINEL', 'REPLICAS', name);
  const replicaLinked = /^flags\nslave\n/m.test(replicas) && /^master-link-status\nok$/m.test(replicas);
  return quorum.startsWith('OK 3 usable') && replicaLinked;
}

async function everySentinel(
  sentinels: readonly RedisProcess[],
  check: (port: number) => Promise<boolean>,
): Promise<boolean> {
  const answers = await Promise.all(sentinels.map((s) => check(s.port).catch(() => false)));
  return answers.every(Boolean);
}
