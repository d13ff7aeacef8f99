/** The Redis client of every bench variant, the HTTP servers' and the core rows' alike. */
import { Redis } from 'ioredis';

/**
 * The client Tollgate's README recommends, given to every Redis variant alike: fail fast (no offline
 * queue, no retries) and auto-pipelining, which lets the peers' concurrent commands share a write.
 */
export async function connectBenchRedis(url: string): Promise<Redis> {
  const client = new Redis(url, {
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
  });
  client.on('error', (error) => console.error(`redis: ${error.message}`));
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
  return client;
}
