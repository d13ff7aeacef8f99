/** The Express 5 app of each variant: one GET route answering `ok`, behind the variant's limiter. */
import type { RequestListener } from 'node:http';
import { RedisStore } from '@tollgate/core';
import { rateLimit as tollgate } from '@tollgate/express';
import express, { type RequestHandler } from 'express';
import { rateLimit as expressRateLimit } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import { RedisStore as RateLimitRedisStore, type RedisReply } from 'rate-limit-redis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { type Refusal, tollgateRefusal } from './refusal.js';
import { type AppSettings, clientOf, type Variant } from './scenarios.js';

/** Builds the app of `variant`; `redis` is a connected, fail-fast client for the variants that use Redis. */
export async function expressApp(
  variant: Variant,
  settings: AppSettings,
  redis: Redis | undefined,
): Promise<RequestListener> {
  const app = express();
  const limiter =
    variant === 'refusal-floor'
      ? refusing(await tollgateRefusal(settings.scenario))
      : limiterOf(variant, settings, redis);
  if (limiter) app.use(limiter);
  app.get('/', (_req, res) => {
    res.send('ok');
  });
  return app;
}

function limiterOf(
  variant: Variant,
  settings: AppSettings,
  redis: Redis | undefined,
): RequestHandler | undefined {
  const { scenario, keyPrefix } = settings;
  switch (variant) {
    case 'none':
      return undefined;
    case 'tollgate-redis':
    case 'tollgate-memory':
      return tollgate({
        limit: scenario.limit,
        window: scenario.windowMs,
        key: (req) => clientOf(req.headers),
        ...(variant === 'tollgate-redis' && {
          store: new RedisStore({ client: redis as Redis, prefix: `${keyPrefix}tollgate:` }),
        }),
      });
    case 'express-rate-limit':
      // As its README recommends: draft-8 headers, no legacy X-RateLimit-* headers.
      return expressRateLimit({
        windowMs: scenario.windowMs,
        limit: scenario.limit,
        standardHeaders: 'draft-8',
        legacyHeaders: false,
        keyGenerator: (req) => clientOf(req.headers),
        store: new RateLimitRedisStore({
          sendCommand: (command: string, ...args: string[]) =>
            (redis as Redis).call(command, ...args) as Promise<RedisReply>,
          prefix: `${keyPrefix}erl:`,
        }),
      });
    case 'rate-limiter-flexible':
      return flexibleMiddleware(settings, redis as Redis);
    default:
      throw new Error(`no Express app for ${variant}`);
  }
}

/** rate-limiter-flexible ships no middleware: this is the one its README shows for Express. */
function flexibleMiddleware({ scenario, keyPrefix }: AppSettings, redis: Redis): RequestHandler {
  const limiter = new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: `${keyPrefix}rlf`,
    points: scenario.limit,
    duration: scenario.windowMs / 1000,
  });
  return function rateLimiterFlexible(req, res, next) {
    limiter.consume(clientOf(req.headers)).then(
      () => next(),
      (rejection: unknown) => {
        if (rejection instanceof Error) return next(rejection);
        res.status(429).send('Too Many Requests');
      },
    );
  };
}

/** Answers every request with `refusal`, written as @tollgate/express writes its own. */
function refusing({ status, headers, contentType, body }: Refusal): RequestHandler {
  const length = Buffer.byteLength(body);
  return function refusalFloor(_req, res) {
    res.statusCode = status;
    for (const name in headers) res.setHeader(name, headers[name] as string);
    res.setHeader('Content-Type', contentType);
    res.setHeader('Content-Length', length);
    res.end(body);
  };
}
