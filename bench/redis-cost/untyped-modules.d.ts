// Types for @fastify/rate-limit's Redis store, which the package does not export as a module of its own:
// only what the Redis-cost rows use.
declare module '@fastify/rate-limit/store/RedisStore.js' {
  import type { Redis } from 'ioredis';

  interface IncrResult {
    current: number;
    ttl: number;
  }
  interface RouteOptions {
    routeInfo: { method: string; url: string };
    continueExceeding: boolean;
    exponentialBackoff: boolean;
  }
  class RedisStore {
    constructor(continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, key?: string);
    incr(
      key: string,
      callback: (error: Error | null, result: IncrResult | null) => void,
      timeWindowMs: number,
      max: number,
    ): void;
    /** The store a route gets: its keys are the plugin's prefix, the method and the URL, then the client's. */
    child(routeOptions: RouteOptions): RedisStore;
  }
  export default RedisStore;
}
