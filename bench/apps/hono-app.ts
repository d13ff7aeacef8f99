/** The Hono 4 app of each variant, on @hono/node-server: one GET route answering `ok`, behind its limiter. */
import type { RequestListener } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { RedisStore } from '@tollgate/core';
import { rateLimit as tollgate } from '@tollgate/hono';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { RedisStore as HonoRateLimiterRedisStore, type RedisClient, rateLimiter } from 'hono-rate-limiter';
import type { Redis } from 'ioredis';
import { type Refusal, tollgateRefusal } from './refusal.js';
import { type AppSettings, CLIENT_HEADER, type Variant } from './scenarios.js';

/**
 * Builds the app of `variant`; `redis` is a connected, fail-fast client for the variants that use Redis.
 * The listener is what @hono/node-server's `serve()` runs (`getRequestListener(app.fetch)`): the app is
 * served as the Express and Koa apps are.
 */
export async function honoApp(
  variant: Variant,
  settings: AppSettings,
  redis: Redis | undefined,
): Promise<RequestListener> {
  const app = new Hono();
  const limiter =
    variant === 'refusal-floor'
      ? refusing(await tollgateRefusal(settings.scenario))
      : limiterOf(variant, settings, redis);
  if (limiter) app.use(limiter);
  app.get('/', (c) => c.text('ok'));
  return getRequestListener(app.fetch);
}

/** The client, as a Hono app reads a request header (`clientOf` reads Node's headers object instead). */
function clientOf(c: Context): string {
  return c.req.header(CLIENT_HEADER) ?? 'anonymous';
}

function limiterOf(
  variant: Variant,
  { scenario, keyPrefix }: AppSettings,
  redis: Redis | undefined,
): MiddlewareHandler | undefined {
  switch (variant) {
    case 'none':
      return undefined;
    case 'tollgate-redis':
    case 'tollgate-memory':
      return tollgate({
        limit: scenario.limit,
        window: scenario.windowMs,
        key: clientOf,
        ...(variant === 'tollgate-redis' && {
          store: new RedisStore({ client: redis as Redis, prefix: `${keyPrefix}tollgate:` }),
        }),
      });
    case 'hono-rate-limiter':
      // hono-rate-limiter 0.5 ships its RedisStore (the separate @hono-rate-limiter/redis stopped at 0.1.4,
      // for hono-rate-limiter 0.2); its default headers, draft-6.
      return rateLimiter({
        windowMs: scenario.windowMs,
        limit: scenario.limit,
        keyGenerator: clientOf,
        store: new HonoRateLimiterRedisStore({
          client: ioredisClient(redis as Redis),
          prefix: `${keyPrefix}hrl:`,
        }),
      });
    default:
      throw new Error(`no Hono app for ${variant}`);
  }
}

/**
 * The client hono-rate-limiter's RedisStore takes: it documents the shape of @upstash/redis and
 * @vercel/kv (REST clients) and "any Redis client that implements" it; this is that shape on ioredis,
 * each method one ioredis command.
 */
function ioredisClient(redis: Redis): RedisClient {
  return {
    scriptLoad: (script) => redis.script('LOAD', script) as Promise<string>,
    evalsha: <TArgs extends unknown[], TData = unknown>(sha1: string, keys: string[], args: TArgs) =>
      redis.evalsha(sha1, keys.length, ...keys, ...(args as (string | number)[])) as Promise<TData>,
    decr: (key) => redis.decr(key),
    del: (key) => redis.del(key),
  };
}

/** Answers every request with `refusal`, written as @tollgate/hono writes its own (through `c.body`). */
function refusing({ status, headers, contentType, body }: Refusal): MiddlewareHandler {
  const sent = { ...headers, 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(body)) };
  return async function refusalFloor(c) {
    return c.body(body, status as ContentfulStatusCode, sent);
  };
}
