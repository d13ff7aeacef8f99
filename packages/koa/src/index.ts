/** `@tollgate/koa`: Tollgate as Koa middleware (Koa 2 and 3), app-wide or per route with @koa/router. */
import {
  createHttpLimiter,
  type HeaderProfile,
  type RateLimitInfo,
  type RateLimitOptions,
  type RequestAccess,
  stackHeaders,
} from '@tollgate/core';
import type { Context, Middleware } from 'koa';

/** Options of {@link rateLimit}: the shared Tollgate options plus a Koa `handler`. */
export interface KoaRateLimitOptions extends RateLimitOptions<Context> {
  /**
   * Answers a limited request instead of the default 429 problem details. The rate-limit headers
   * (`Retry-After` included) are already set on `ctx`.
   */
  handler?: (ctx: Context, info: RateLimitInfo) => unknown;
}

const koaAccess: RequestAccess<Context> = {
  ip: (ctx) => ctx.ip || undefined,
  socketIp: (ctx) => ctx.req.socket.remoteAddress,
  header: (ctx, name) => ctx.get(name) || undefined,
};

/**
 * The header profile of the rate-limit fields on each response so far, so a later limiter on the same
 * response (a route's, after the app-wide one) keeps the fields of one profile.
 */
const profileWritten = new WeakMap<Context, HeaderProfile | undefined>();

/**
 * Rate-limiting middleware. Use it app-wide or on a route; each call is its own limiter with its own
 * buckets (unless two share a `name`). `ctx.ip` follows `app.proxy`.
 *
 * Without options it limits each client IP to 100 requests per minute; `limit: 0` refuses every request.
 *
 * @example
 * app.use(rateLimit()); // 100 per minute per client IP
 * app.use(rateLimit({ limit: 100, window: '1m' }));
 * router.post('/login', rateLimit({ limit: 5, window: '15m' }), login);
 */
export function rateLimit(options: KoaRateLimitOptions = {}): Middleware {
  const limiter = createHttpLimiter(options, koaAccess, { adapter: '@tollgate/koa' });
  const handler = options.handler;

  return async function rateLimit(ctx, next) {
    const outcome = await limiter.check(ctx);
    if (outcome.kind === 'skipped') return next();
    const stacked = stackHeaders(outcome, {
      profile: profileWritten.get(ctx),
      get: (name) => ctx.response.get(name),
    });
    for (const name of stacked.remove) ctx.remove(name);
    ctx.set(stacked.set);
    profileWritten.set(ctx, stacked.profile);
    if (outcome.kind === 'allowed') return next();
    if (outcome.kind === 'error') throw outcome.error;
    if (handler) return handler(ctx, outcome.info);
    const { status, contentType, body } = await limiter.rejection(ctx, outcome.info);
    ctx.status = status;
    ctx.type = contentType;
    ctx.body = body;
  };
}

export type { HeaderProfile, KeyFunction, Policy, RateLimitInfo, Store } from '@tollgate/core';
export {
  byApiKey,
  byIp,
  byUser,
  firstOf,
  MemoryStore,
  RateLimitError,
  RedisStore,
} from '@tollgate/core';
