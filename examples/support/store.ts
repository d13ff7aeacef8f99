/** The one store every limiter of this app shares: Redis when REDIS_URL is set, else this process's memory. */
import { MemoryStore, RedisStore, type Store } from '@tollgate/core';
import { Redis } from 'ioredis';

/** A store, with what to call it on start and how to let go of it on shutdown. */
export interface SharedStore {
  readonly store: Store;
  /** For the start-up banner: memory, or Redis at host:port (never the password). */
  readonly description: string;
  /** Disconnects from Redis; nothing to do in memory. */
  close(): Promise<void>;
}

/**
 * Opens the shared store. Each example writes under its own Redis prefix, so running the examples one
 * after another against the same Redis does not hand one the buckets another drained.
 *
 * @example
 * const { store } = openStore(process.env.REDIS_URL, 'tollgate:example-express:');
 */
export function openStore(redisUrl: string | undefined, prefix: string): SharedStore {
  if (!redisUrl) {
    return { store: new MemoryStore(), description: 'memory (this process only)', close: async () => {} };
  }
  // Fail fast: while Redis is away, checks take the insurance limiter at once instead of waiting in a
  // queue and reaching Redis late. (No auto-pipelining: the store batches concurrent checks itself.)
  const client = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
  reportRedisErrors(client);
  return {
    store: new RedisStore({ client, prefix }),
    description: `Redis at ${redisAddress(redisUrl)} (shared by every app server)`,
    close: async () => {
      // QUIT waits for Redis to answer; while Redis is unreachable it would wait forever.
      if (client.status === 'ready') await client.quit();
      else client.disconnect();
    },
  };
}

/** Logs connection errors once each, not on every reconnect attempt while Redis stays away. */
function reportRedisErrors(client: Redis): void {
  let lastMessage: string | undefined;
  client.on('error', (error: Error) => {
    if (error.message !== lastMessage) console.error(`redis: ${error.message}`);
    lastMessage = error.message;
  });
  client.on('ready', () => {
    lastMessage = undefined;
  });
}

/**
 * Host and port of a Redis URL, for printing: the URL itself may carry a password.
 *
 * @example
 * redisAddress('redis://:secret@cache:6380'); // 'cache:6380'
 */
export function redisAddress(redisUrl: string): string {
  try {
    const { hostname, port } = new URL(redisUrl);
    return `${hostname || '127.0.0.1'}:${port || 6379}`;
  } catch {
    return 'an invalid URL';
  }
}
