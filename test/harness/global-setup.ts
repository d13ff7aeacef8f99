/**
 * Vitest global setup: one real Redis, one real 3-master Redis Cluster and one TLS Redis for the whole
 * run, started here (at once) and stopped after. `REDIS_URL` / `REDIS_CLUSTER_NODES`
 * (`host:port,host:port`) / `REDIS_TLS_URL` (`rediss://host:port`, with `REDIS_TLS_CA`, the path of the
 * CA's PEM file) point tests elsewhere. Sentinel tests start their own set (`sentinel.ts`): they kill
 * its master.
 */
import { readFile } from 'node:fs/promises';
import type { TestProject } from 'vitest/node';
import {
  type RedisClusterProcess,
  type RedisProcess,
  startRedisCluster,
  startRedisServer,
} from './redis-server.js';
import { startTlsRedisServer } from './tls.js';

/** The TLS Redis: where it listens and the CA (PEM) that signed its certificate; or why there is none. */
export type TlsRedisInfo = { host: string; port: number; ca: string } | { unavailable: string };

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    redisClusterNodes: { host: string; port: number }[];
    redisTls: TlsRedisInfo;
  }
}

type Started = RedisProcess | RedisClusterProcess;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started: Started[] = [];
  const keep = <S extends Started>(server: S): S => {
    started.push(server);
    return server;
  };
  const stopAll = async () => {
    await Promise.all(started.map((s) => s.stop()));
  };
  const starting = [
    process.env.REDIS_URL ?? startRedisServer().then((server) => keep(server).url),
    parseNodes(process.env.REDIS_CLUSTER_NODES) ??
      startRedisCluster(3).then((cluster) => [...keep(cluster).nodes]),
    tlsRedis(keep),
  ] as const;
  await Promise.allSettled(starting); // all started or failed: none left to stop later
  try {
    const [redisUrl, clusterNodes, tls] = await Promise.all(starting);
    project.provide('redisUrl', redisUrl);
    project.provide('redisClusterNodes', clusterNodes);
    project.provide('redisTls', tls);
  } catch (error) {
    await stopAll();
    throw error;
  }
  return stopAll;
}

/** The TLS Redis of `REDIS_TLS_URL`, or one started here (none when `redis-server` has no TLS). */
async function tlsRedis(keep: (server: RedisProcess) => RedisProcess): Promise<TlsRedisInfo> {
  const url = process.env.REDIS_TLS_URL;
  if (url) {
    const caFile = process.env.REDIS_TLS_CA;
    if (!caFile) throw new Error('REDIS_TLS_URL needs REDIS_TLS_CA: the path of the PEM file of its CA');
    const { hostname, port } = new URL(url);
    return { host: hostname, port: Number(port || 6379), ca: await readFile(caFile, 'utf8') };
  }
  const server = await startTlsRedisServer();
  if ('unavailable' in server) return server;
  keep(server);
  return { host: server.host, port: server.port, ca: server.ca };
}

function parseNodes(value: string | undefined): { host: string; port: number }[] | undefined {
  if (!value) return undefined;
  return value.split(',').map((address) => {
    const [host = '', port = ''] = address.trim().split(':');
    return { host, port: Number(port) };
  });
}
