/** The NestJS 11 app (on Express) of each variant: one GET route answering `ok`, behind the variant's guard. */
import 'reflect-metadata';
import type { ServerResponse } from 'node:http';
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import {
  type CanActivate,
  Controller,
  type ExecutionContext,
  Get,
  type INestApplication,
  type LoggerService,
  Module,
  type ModuleMetadata,
  type Type,
} from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { ThrottlerGuard, ThrottlerModule } from '@nestjs/throttler';
import { RedisStore } from '@tollgate/core';
import { type NestHttpRequest, RateLimitException, TollgateGuard, TollgateModule } from '@tollgate/nestjs';
import type { Redis } from 'ioredis';
import { type Refusal, tollgateRefusal } from './refusal.js';
import { type AppSettings, clientOf, type Variant } from './scenarios.js';

/**
 * Builds the app of `variant` (not listening yet); `redis` is a connected, fail-fast client for the
 * variants that use Redis. Each variant's limiter is a guard for every route, through `APP_GUARD`.
 */
export async function nestjsApp(
  variant: Variant,
  settings: AppSettings,
  redis: Redis | undefined,
): Promise<INestApplication> {
  const metadata =
    variant === 'refusal-floor'
      ? { providers: [{ provide: APP_GUARD, useValue: refusing(await tollgateRefusal(settings.scenario)) }] }
      : limiterOf(variant, settings, redis);
  // abortOnError off: a module that fails to build rejects here, and the server says why, not a core dump.
  return NestFactory.create(benchModule(metadata), { logger: STDERR_LOGGER, abortOnError: false });
}

class BenchController {
  ok(): string {
    return 'ok';
  }
}

// Decorated by calls, not by syntax, as @tollgate/nestjs does: tsx compiles this file under any setting.
Controller()(BenchController);
Get()(
  BenchController.prototype,
  'ok',
  Object.getOwnPropertyDescriptor(BenchController.prototype, 'ok') ?? {},
);

/** A root module of its own for each app: one process builds an app per scenario. */
function benchModule(metadata: ModuleMetadata): Type {
  class BenchModule {}
  Module({ ...metadata, controllers: [BenchController] })(BenchModule);
  return BenchModule;
}

function limiterOf(
  variant: Variant,
  { scenario, keyPrefix }: AppSettings,
  redis: Redis | undefined,
): ModuleMetadata {
  switch (variant) {
    case 'none':
      return {};
    case 'tollgate-redis':
    case 'tollgate-memory':
      return {
        imports: [
          TollgateModule.forRoot({
            limit: scenario.limit,
            window: scenario.windowMs,
            key: (req: NestHttpRequest) => clientOf(req.headers),
            ...(variant === 'tollgate-redis' && {
              store: new RedisStore({ client: redis as Redis, prefix: `${keyPrefix}tollgate:` }),
            }),
          }),
        ],
        providers: [{ provide: APP_GUARD, useClass: TollgateGuard }],
      };
    case 'nestjs-throttler':
      // As @nest-lab/throttler-storage-redis documents it: the storage given an ioredis client. The
      // storage has no key prefix: the prefix goes into the tracker, which the guard's default key hashes.
      return {
        imports: [
          ThrottlerModule.forRoot({
            throttlers: [{ limit: scenario.limit, ttl: scenario.windowMs }],
            getTracker: (req) => `${keyPrefix}${clientOf(req.headers)}`,
            storage: new ThrottlerStorageRedisService(redis as Redis),
          }),
        ],
        providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
      };
    default:
      throw new Error(`no NestJS app for ${variant}`);
  }
}

/** Express's `res`, as Nest's default exception filter sends with it. */
interface ExpressResponse extends ServerResponse {
  json(body: unknown): unknown;
}

/**
 * A guard that refuses every request with `refusal`, sent as @tollgate/nestjs sends its own: the headers
 * on the response, then a `RateLimitException` for Nest's exception filter, whose `res.json` of the
 * exception's body is sent as the limiter wrote it.
 */
function refusing({ status, headers, contentType, body }: Refusal): CanActivate {
  const rejection = { status, contentType, body, bytes: Buffer.from(body) };
  return {
    canActivate(context: ExecutionContext): boolean {
      const res = context.switchToHttp().getResponse<ExpressResponse>();
      for (const name in headers) res.setHeader(name, headers[name] as string);
      const exception = new RateLimitException(rejection);
      const answer = exception.getResponse();
      const json = res.json;
      res.json = (sent) => (sent === answer ? endWith(res) : json.call(res, sent));
      throw exception;
    },
  };

  function endWith(res: ServerResponse): ServerResponse {
    res.statusCode = status;
    res.setHeader('Content-Type', contentType);
    res.setHeader('Content-Length', rejection.bytes.length);
    return res.end(body);
  }
}

/**
 * Nest's warnings and errors on stderr, its startup lines nowhere: a server's stdout carries its ports
 * line only (Nest's own logger writes warnings to stdout).
 */
const STDERR_LOGGER: LoggerService = {
  log() {},
  warn: (message: unknown, ...context: unknown[]) => console.error('warn:', message, ...context),
  error: (message: unknown, ...rest: unknown[]) => console.error('error:', message, ...rest),
};
