/** `@RateLimit()` and `@SkipRateLimit()`: a controller's or a handler's own limit, or none. */
import { SetMetadata } from '@nestjs/common';
import type { NestHttpRequest, TollgateModuleOptions } from './options.js';

/** The metadata key both decorators write: the handler's, else the controller's, is the route's. */
export const RATE_LIMIT = 'tollgate:rate-limit';

/** What a decorator put: `@RateLimit`'s options (one object per decorator, so one limiter each), or `false`. */
export type RateLimitMark = { readonly options: RouteRateLimitOptions<never> } | false;

/** `@RateLimit` options: over the module's options, which give whatever these leave out (but `name`). */
export type RouteRateLimitOptions<Req = NestHttpRequest> = Partial<TollgateModuleOptions<Req>>;

/**
 * The route's own limiter, instead of the module's app-wide one: on a class (a controller, a GraphQL
 * resolver, a WebSocket gateway), for each of its handlers; on a handler, over its class's. It inherits the module's options (`store`, `key`, …)
 * except `name`, and a `limit`/`window` here replaces the module's `policies` (and the other way round).
 * Each `@RateLimit` is a limiter of its own, with buckets of its own unless two share a `name`; all are
 * built when the app starts, so bad options stop it. It limits where `TollgateGuard` runs (globally, or
 * by `@UseGuards`).
 *
 * @example
 * @RateLimit({ limit: 5, window: '15m', skipSuccessfulRequests: true })
 * @Post('login')
 * login() {}
 */
export function RateLimit<Req = NestHttpRequest>(options: RouteRateLimitOptions<Req>) {
  return SetMetadata<string, RateLimitMark>(RATE_LIMIT, { options: options as RouteRateLimitOptions<never> });
}

/**
 * No rate limit for this class (a controller, a resolver, a gateway) or handler: `TollgateGuard` lets its
 * calls through uncounted and without headers. On a handler, it wins over its class's `@RateLimit`, and
 * the other way round.
 *
 * @example
 * @SkipRateLimit()
 * @Get('health')
 * health() {}
 */
export function SkipRateLimit() {
  return SetMetadata<string, RateLimitMark>(RATE_LIMIT, false);
}
