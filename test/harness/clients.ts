/** Redis clients for tests, connected to the servers the global setup started. */
import { Cluster, Redis } from 'ioredis';
import { inject } from 'vitest';

/**
 * The client options the READMEs recommend: fail fast (no offline queue, no resending after a reconnect)
 * and auto-pipelining, as production setups use it.
 */
export const FAIL_FAST = {
  enableAutoPipelining: true,
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
} as const;

/** A client of the test Redis, connected and ready. */
export async function connectRedis(url = inject('redisUrl')): Promise<Redis> {
  const client = new Redis(url, FAIL_FAST);
  client.on('error', () => {}); // tests stop servers on purpose; the store reports what matters
  await untilReady(client);
  return client;
}

/** A client of the test Redis Cluster, connected and ready. */
export async function connectCluster(): Promise<Cluster> {
  const client = new Cluster(inject('redisClusterNodes'), {
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    redisOptions: { maxRetriesPerRequest: 0 },
  });
  client.on('error', () => {});
  await untilReady(client);
  return client;
}

/** Resolves once the client is ready to send commands. */
export async function untilReady(client: Redis | Cluster): Promise<void> {
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
}

/** A prefix no other test uses, so tests can share one Redis and run in parallel. */
export function uniquePrefix(name: string): string {
  return `test:${name}:${process.pid}:${Math.random().toString(36).slice(2, 10)}:`;
}
