/**
 * `@tollgate/koa`: Tollgate as Koa middleware (Koa 2 and 3), app-wide or per route with @koa/router.
 *
 * For adapter authors: this file is Koa's code only: how the core reads a Koa context and writes its
 * response, one `createAdapterLimiter` call per limiter, and Koa's way of going on or throwing. The
 * request lifecycle is the core's (`docs/writing-an-adapter.md`).
 */
import type {
  ConcurrencyLimitOptions,
  KeyControls,
  RateLimitInfo,
  RateLimitOptions,
  RateLimitRejection,
} from '@tollgate/core';
import {
  concurrencyLifecycle,
  createAdapterLimiter,
  createHttpConcurrencyLimiter,
  nodeResponses,
  type RequestAccess,
  type ResponseAccess,
} from '@tollgate/core/adapter';
import type { Context, Middleware, Next } from 'koa';

/** Options of {@link rateLimit}: the shared Tollgate options plus a Koa `handler`. */
export interface KoaRateLimitOptions extends RateLimitOptions<Context, Context['response']> {
  /**
   * Answers a limited request instead of the default 429 problem details. The rate-limit headers
   * (`Retry-After` included) are already set on `ctx`.
   */
  handler?: (ctx: Context, info: RateLimitInfo) => unknown;
}

/**
 * The middleware {@link rateLimit} returns: Koa middleware, with its limiter's {@link KeyControls}
 * (`resetKey`, `setOverride`, …), each taking a key as `ctx.state.rateLimit.key` shows it.
 */
export interface RateLimitMiddleware extends Middleware, KeyControls {}

declare module 'koa' {
  interface DefaultState {
    /**
     * This request's rate limit, from the last Tollgate limiter that checked it (with the default
     * `requestPropertyName`). `undefined` when none did, or every one skipped it.
     */
    rateLimit?: RateLimitInfo;
  }
}

const koaAccess: RequestAccess<Context> = {
  ip: (ctx) => ctx.ip || undefined,
  socketIp: (ctx) => ctx.req.socket.remoteAddress,
  header: (ctx, name) => ctx.get(name) || undefined,
  // maxIpsCount 0 (the default) reads every X-Forwarded-For entry, so ctx.ip is the one the client wrote.
  trustsEveryProxy: (ctx) => ctx.app.proxy === true && !(ctx.app.maxIpsCount > 0),
};

/** Who the core's messages are from, and Koa's words for its client-IP setting, which warnings name. */
const SETTINGS = {
  adapter: '@tollgate/koa',
  clientIpSetting: {
    name: 'app.proxy (with app.maxIpsCount, the number of proxies)',
    trustExactly: 'app.proxy with app.maxIpsCount set to their number',
  },
} as const;

/**
 * The frame of koa-compose running a middleware (Koa 2 and 3 compose with it). On the stack of a
 * `rateLimit()` call, it means the limiter is being created per request.
 */
const HANDLING_FRAME = /[\\/]koa-compose[\\/]index\.js:/;

/** Koa's response (what `requestWasSuccessful` gets), with the Node.js response under it. */
type KoaResponse = Context['response'];

const koaResponses: ResponseAccess<Context, KoaResponse> = {
  node: (response) => response.res,
  getHeader: (response, name) => response.get(name),
  // Node's own setHeader: the values are strings already, and Koa's ctx.set, through its delegates,
  // costs a microsecond or two more per request. The lifecycle calls it only before the head is sent.
  setHeaders: (response, headers) => nodeResponses.setHeaders(response.res, headers),
  removeHeader: (response, name) => response.res.removeHeader(name),
  expose(ctx, property, info) {
    ctx.state[property] = info;
  },
  send: (response, rejection) => refuse(response.ctx, rejection),
};

/**
 * Rate-limiting middleware. Use it app-wide or on a route; each call is its own limiter with its own
 * buckets (unless two share a `name`). `ctx.ip` follows `app.proxy`. The request's `RateLimitInfo` is on
 * `ctx.state.rateLimit` for later middleware.
 *
 * Without options it limits each client IP to 100 requests per minute; `limit: 0` refuses every request.
 *
 * @example
 * app.use(rateLimit()); // 100 per minute per client IP
 * app.use(rateLimit({ limit: 100, window: '1m' }));
 * router.post('/login', rateLimit({ limit: 5, window: '15m', skipSuccessfulRequests: true }), login);
 */
export function rateLimit(options: KoaRateLimitOptions = {}): RateLimitMiddleware {
  const { handle, handler, controls } = createAdapterLimiter<
    Context,
    Context['response'],
    NonNullable<KoaRateLimitOptions['handler']>
  >(
    options,
    { requests: koaAccess, responses: koaResponses },
    { ...SETTINGS, inRequestHandler: HANDLING_FRAME.test(new Error().stack ?? '') },
  );

  async function rateLimit(ctx: Context, next: Next) {
    const handled = await handle(ctx, ctx.response);
    if (handled.kind === 'next') return next();
    if (handled.kind === 'error') throw handled.error;
    if (handled.kind === 'handler' && handler) return handler(ctx, handled.info);
  }

  return Object.assign(rateLimit, controls);
}

/**
 * Answers with a refusal. Its Content-Type is set as it is: it is complete (with its charset where it
 * has one), so Koa's `ctx.type`, which looks the type up, would change nothing but cost more. The body
 * is a string, not bytes: Node writes a string body with the head in one chunk, a little cheaper.
 */
function refuse(ctx: Context, { status, contentType, body }: RateLimitRejection): void {
  ctx.status = status;
  ctx.res.setHeader('Content-Type', contentType);
  ctx.body = body;
}

/**
 * Concurrency-limiting middleware: at most `limit` requests of one client in progress at once (open
 * uploads, expensive reports), rather than per window. A request's slot is released when its response
 * is done, or when the client goes away; a refused one gets a 429 with problem details.
 *
 * @example
 * router.post('/uploads', concurrencyLimit({ limit: 2, key: byUser((ctx) => ctx.state.user?.id) }), upload);
 */
export function concurrencyLimit(options: ConcurrencyLimitOptions<Context>): Middleware {
  const limiter = createHttpConcurrencyLimiter(options, koaAccess, SETTINGS);
  const handle = concurrencyLifecycle(limiter, koaResponses);
  return async function concurrencyLimit(ctx, next) {
    const handled = await handle(ctx, ctx.response);
    if (handled.kind === 'next') return next();
    if (handled.kind === 'error') throw handled.error;
  };
}

export * from '@tollgate/core/app-exports';
