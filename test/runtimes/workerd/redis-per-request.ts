/**
 * Redis stores for one request of a Worker, on ioredis or node-redis: workerd ties a socket to the
 * request that opened it, so a client kept at module scope hangs every later request that uses it. The
 * runtime closes the socket once the request is done.
 */
import { RedisStore, type Store } from '@tollgate/fetch';
import { Redis } from 'ioredis';
import { createClient } from 'redis';

/** A store on an ioredis client of its own, connected: only the check goes to Redis (no ready check, no `HELLO`). */
export async function storeOnIoredis(url: string): Promise<Store> {
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    enableReadyCheck: false,
    protocol: 2,
  });
  await client.connect();
  return new RedisStore({ client });
}

/** {@link storeOnIoredis}, with node-redis. */
export async function storeOnNodeRedis(url: string): Promise<Store> {
  const client = createClient({ url, disableOfflineQueue: true });
  await client.connect();
  return new RedisStore({ client });
}
