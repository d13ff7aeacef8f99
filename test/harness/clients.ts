/** Redis clients for tests, connected to the servers the global setup started. */
import { Cluster, Redis } from 'ioredis';
import { inject } from 'vitest';

/** A client of the test Redis; `enableAutoPipelining` as production setups use it. */
export function connectRedis(): Redis {
  return new Redis(inject('redisUrl'), { enableAutoPipelining: true, maxRetriesPerRequest: 1 });
}

/** A client of the test Redis Cluster. */
export function connectCluster(): Cluster {
  return new Cluster(inject('redisClusterNodes'), { enableAutoPipelining: true });
}

/** A prefix no other test uses, so tests can share one Redis and run in parallel. */
export function uniquePrefix(name: string): string {
  return `test:${name}:${process.pid}:${Math.random().toString(36).slice(2, 10)}:`;
}
