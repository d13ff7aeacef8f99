/**
 * The fetch worker the workerd suite serves: `@tollgate/fetch` in this isolate's memory, and on Redis over
 * TCP (or TLS, given `?tls`) through ioredis and node-redis, with a client connected per request.
 */
import { rateLimit, type Store, withConcurrencyLimit, withRateLimit } from '@tollgate/fetch';
import { storeOnIoredis, storeOnNodeRedis } from './redis-per-request.js';

/** The bindings of `workerd.capnp`. */
interface Env {
  readonly REDIS_URL: string;
  /** A `rediss://` URL, of a Redis whose certificate the config's network trusts. */
  readonly REDIS_TLS_URL: string;
}

/** What workerd passes a Worker's `fetch` after its bindings: the request's ExecutionContext. */
interface ExecutionContext {
  waitUntil(work: Promise<unknown>): void;
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
 * A limiter on Redis, built for this request around its store. Its `name` is what makes the requests'
 * limiters one: the ioredis and node-redis routes share it, and so their buckets.
 */
async function onRedis(request: Request, store: Store): Promise<Response> {
  const shared = rateLimit({ name: 'shared', limit: 5, window: '1m', ip, store });
  const result = await shared.check(request);
  return result.allowed ? result.apply(hello()) : result.response;
}

/**
 * Work on Redis after the response: a failed answer's charge given back, or a concurrency slot
 * released, once its body was sent. The wrapped handlers get `env` and `ctx`, as Workers pass them.
 */
async function afterResponseOnRedis(
  path: string,
  request: Request,
  env: Env,
  ctx: ExecutionContext,
): Promise<Response> {
  const store = await storeOnIoredis(env.REDIS_URL);
  type Args = [Env, ExecutionContext];
  const handler =
    path === '/ioredis/refund'
      ? withRateLimit<Request, Args>(failing, {
          name: 'refund',
          limit: 2,
          window: '1m',
          ip,
          store,
          skipFailedRequests: true,
        })
      : withConcurrencyLimit<Request, Args>(hello, { name: 'slot', limit: 1, ip, store });
  return handler(request, env, ctx);
}

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const { pathname: path, searchParams } = new URL(request.url);
    const redisUrl = searchParams.has('tls') ? env.REDIS_TLS_URL : env.REDIS_URL;
    switch (path) {
      case '/memory':
        return inMemory(request);
      case '/memory/refund':
        return failuresFree(request);
      case '/ioredis':
        return onRedis(request, await storeOnIoredis(redisUrl));
      case '/node-redis':
        return onRedis(request, await storeOnNodeRedis(redisUrl));
      case '/ioredis/refund':
      case '/ioredis/slot':
        return afterResponseOnRedis(path, request, env, ctx);
      default:
        return new Response('not found\n', { status: 404 });
    }
  },
};
