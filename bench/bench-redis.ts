/** The Redis clients of the bench variants, the HTTP servers' and the core rows' alike. */
import { Redis } from 'ioredis';

/**
 * A fail-fast client (no offline queue, no retries), each library's best: Tollgate's without
 * auto-pipelining, as its README recommends (it batches checks itself, and a client that pipelines
 * besides costs it CPU), the peers' with it, which lets their concurrent commands share a write (without
 * it, @fastify/rate-limit's Redis CPU per request more than doubled on one hot key).
 */
export async function connectBenchRedis(
  url: string,
  { autoPipelining }: { autoPipelining: boolean },
): Promise<Redis> {
  const client = new Redis(url, {
    enableAutoPipelining: autoPipelining,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
  });
  client.on('error', (error) => console.error(`redis: ${error.message}`));
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
  return client;
}
