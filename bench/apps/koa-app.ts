/** The Koa 3 app of each variant: every request answered `ok`, behind the variant's limiter. */
import type { RequestListener } from 'node:http';
import { RedisStore } from '@tollgate/core';
import { rateLimit as tollgate } from '@tollgate/koa';
import type { Redis } from 'ioredis';
import Koa, { type Middleware } from 'koa';
import koaRateLimit from 'koa-ratelimit';
import { type Refusal, tollgateRefusal } from './refusal.js';
import { type AppSettings, clientOf, type Variant } from './scenarios.js';

/** Builds the app of `variant`; `redis` is a connected, fail-fast client for the variants that use Redis. */
export async function koaApp(
  variant: Variant,
  settings: AppSettings,
  redis: Redis | undefined,
): Promise<RequestListener> {
  const app = new Koa();
  const limiter =
    variant === 'refusal-floor'
      ? refusing(await tollgateRefusal(settings.scenario))
      : limiterOf(variant, settings, redis);
  if (limiter) app.use(limiter);
  app.use((ctx) => {
    ctx.body = 'ok';
  });
  return app.callback();
}

function limiterOf(
  variant: Variant,
  { scenario, keyPrefix }: AppSettings,
  redis: Redis | undefined,
): Middleware | undefined {
  switch (variant) {
    case 'none':
      return undefined;
    case 'tollgate-redis':
    case 'tollgate-memory':
      return tollgate({
        limit: scenario.limit,
        window: scenario.windowMs,
        key: (ctx) => clientOf(ctx.headers),
        ...(variant === 'tollgate-redis' && {
          store: new RedisStore({ client: redis as Redis, prefix: `${keyPrefix}tollgate:` }),
        }),
      });
    case 'koa-ratelimit':
      return koaRateLimit({
        driver: 'redis',
        db: redis,
        duration: scenario.windowMs,
        max: scenario.limit,
        id: (ctx) => clientOf(ctx.headers),
        namespace: `${keyPrefix}krl`,
      });
    default:
      throw new Error(`no Koa app for ${variant}`);
  }
}

/** Answers every request with `refusal`, written as @tollgate/koa writes its own. */
function refusing({ status, headers, contentType, body }: Refusal): Middleware {
  return async function refusalFloor(ctx) {
    const { res } = ctx;
    for (const name in headers) res.setHeader(name, headers[name] as string);
    ctx.status = status;
    res.setHeader('Content-Type', contentType);
    ctx.body = body;
  };
}
