/**
 * Vitest global setup: one real Redis and one real 3-master Redis Cluster for the whole run, started here
 * and stopped after. `REDIS_URL` / `REDIS_CLUSTER_NODES` (`host:port,host:port`) point tests elsewhere.
 */
import type { TestProject } from 'vitest/node';
import {
  type RedisClusterProcess,
  type RedisProcess,
  startRedisCluster,
  startRedisServer,
} from './redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    redisClusterNodes: { host: string; port: number }[];
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started: (RedisProcess | RedisClusterProcess)[] = [];
  try {
    let redisUrl = process.env.REDIS_URL;
    if (!redisUrl) {
      const server = await startRedisServer();
      started.push(server);
      redisUrl = server.url;
    }
    let clusterNodes = parseNodes(process.env.REDIS_CLUSTER_NODES);
    if (!clusterNodes) {
      const cluster = await startRedisCluster(3);
      started.push(cluster);
      clusterNodes = [...cluster.nodes];
    }
    project.provide('redisUrl', redisUrl);
    project.provide('redisClusterNodes', clusterNodes);
  } catch (error) {
    await Promise.all(started.map((s) => s.stop()));
    throw error;
  }
  return async () => {
    await Promise.all(started.map((s) => s.stop()));
  };
}

function parseNodes(value: string | undefined): { host: string; port: number }[] | undefined {
  if (!value) return undefined;
  return value.split(',').map((address) => {
    const [host = '', port = ''] = address.trim().split(':');
    return { host, port: Number(port) };
  });
}
