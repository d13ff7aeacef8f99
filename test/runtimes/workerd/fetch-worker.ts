/**
 * The fetch worker the workerd suite serves: `@tollgate/fetch` in this isolate's memory, and on Redis over
 * TCP through ioredis and node-redis, with a client connected per request.
 */
import { RedisStore, rateLimit, type Store, withRateLimit } from '@tollgate/fetch';
import { Redis } from 'ioredis';
import { createClient } from 'redis';

/** The bindings of `workerd.capnp`. */
interface Env {
  readonly REDIS_URL: string;
}

/** Cloudflare sets CF-Connecting-IP on every request; under bare workerd the suite sets it. */
const ip = (request: Request) => request.headers.get('cf-connecting-ip') ?? undefined;
const hello = () => new Response('hello\n');
const failing = () => new Response('failed\n', { status: 500 });

// Built once, at module scope: the buckets live as long as the isolate.
const inMemory = withRateLimit(hello, { name: 'memory', limit: 3, window: '1m', ip });
const failuresFree = withRateLimit(failing, {
  name: 'memory-refund',
  limit: 2,
  window: '1m',
  ip,
  skipFailedRequests: true,
});

/**
 * A Redis store on a client of this request's own: workerd ties a socket to the request that opened it,
 * so a client kept at module scope hangs every later request that uses it. The runtime closes the
 * socket once the request is done. Only the check goes to Redis: no ready check, no `HELLO`.
 */
async function storeOnIoredis(env: Env): Promise<Store> {
  const client = new Redis(env.REDIS_URL, {
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
async function storeOnNodeRedis(env: Env): Promise<Store> {
  const client = createClient({ url: env.REDIS_URL, disableOfflineQueue: true });
  await client.connect();
  return new RedisStore({ client });
}

/**
 * A limiter on Redis, built for this request around its store. Its `name` is what makes the requests'
 * limiters one: the ioredis and node-redis routes share it, and so their buckets.
 */
async function onRedis(request: Request, store: Store): Promise<Response> {
  const shared = rateLimit({ name: 'shared', limit: 5, window: '1m', ip, store });
  const result = await shared.check(request);
  return result.allowed ? result.apply(hello()) : result.response;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    switch (new URL(request.url).pathname) {
      case '/memory':
        return inMemory(request);
      case '/memory/refund':
        return failuresFree(request);
      case '/ioredis':
        return onRedis(request, await storeOnIoredis(env));
      case '/node-redis':
        return onRedis(request, await storeOnNodeRedis(env));
      default:
        return new Response('not found\n', { status: 404 });
    }
  },
};
