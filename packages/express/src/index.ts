/**
 * `@tollgate/express`: Tollgate as Express middleware (Express 4 and 5).
 *
 * For adapter authors: this file is Express's code only. Express is described to the core as a platform
 * (its requests as Node.js's, with its own `trust proxy`; its responses as Node.js's), each limiter is
 * built by one `createAdapterLimiter` call, and the request lifecycle is the core's
 * (`docs/writing-an-adapter.md`).
 */
import type { ConcurrencyLimitOptions, KeyControls, RateLimitInfo, RateLimitOptions } from '@tollgate/core';
import {
  concurrencyLifecycle,
  createAdapterLimiter,
  createHttpConcurrencyLimiter,
  nodeRequestAccess,
  nodeResponses,
} from '@tollgate/core/adapter';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** Options of {@link rateLimit}: the shared Tollgate options plus an Express `handler`. */
export interface ExpressRateLimitOptions extends RateLimitOptions<Request, Response> {
  /**
   * Answers a limited request instead of the default 429 problem details. The rate-limit headers
   * (`Retry-After` included) are already set on `res`.
   */
  handler?: (req: Request, res: Response, next: NextFunction, info: RateLimitInfo) => unknown;
}

/**
 * The middleware {@link rateLimit} returns: Express middleware, with its limiter's {@link KeyControls}
 * (`resetKey`, `setOverride`, …), each taking a key as `req.rateLimit.key` shows it (`'ip:203.0.113.7'`).
 */
export interface RateLimitMiddleware extends RequestHandler, KeyControls {}

declare global {
  // Express's own types merge `Request` through this namespace, in Express 4 and 5 alike.
  namespace Express {
    interface Request {
      /**
       * This request's rate limit, from the last Tollgate limiter that checked it (with the default
       * `requestPropertyName`). `undefined` when none did, or every one skipped it.
       */
      rateLimit?: RateLimitInfo;
    }
  }
}

const expressAccess = nodeRequestAccess<Request>((req) => req.app?.get('trust proxy') === true);
/** Express as the core reads and writes it: Node.js requests and responses. */
const EXPRESS = { requests: expressAccess, responses: nodeResponses };

/** Who the core's messages are from, and Express's words for its client-IP setting, which warnings name. */
const SETTINGS = {
  adapter: '@tollgate/express',
  clientIpSetting: {
    name: "app.set('trust proxy', …)",
    trustExactly: "app.set('trust proxy', …) with 'loopback', their addresses or their number",
  },
} as const;

/**
 * The frame of Express running middleware or a route handler: `Layer.handle [as handle_request]` in
 * Express 4, `Layer.handleRequest` in Express 5. On the stack of a `rateLimit()` call, it means the
 * limiter is being created per request.
 */
const HANDLING_FRAME = /\bLayer\.(?:handle \[as handle_request\]|handleRequest) /;

/**
 * Rate-limiting middleware. Use it app-wide, on a router, or on one route; each call is its own
 * limiter with its own buckets (unless two share a `name`). The request's `RateLimitInfo` is on
 * `req.rateLimit` for later middleware and handlers.
 *
 * Without options it limits each client IP to 100 requests per minute; `limit: 0` refuses every request.
 *
 * @example
 * app.use(rateLimit()); // 100 per minute per client IP
 * app.use(rateLimit({ limit: 100, window: '1m' }));
 * app.post('/login', rateLimit({ limit: 5, window: '15m', store, skipSuccessfulRequests: true }), login);
 */
export function rateLimit(options: ExpressRateLimitOptions = {}): RateLimitMiddleware {
  const { handle, handler, controls } = createAdapterLimiter<
    Request,
    Response,
    NonNullable<ExpressRateLimitOptions['handler']>
  >(options, EXPRESS, { ...SETTINGS, inRequestHandler: HANDLING_FRAME.test(new Error().stack ?? '') });

  // Express 4 does not catch a rejected middleware promise: this function must never reject.
  async function rateLimit(req: Request, res: Response, next: NextFunction) {
    const handled = await handle(req, res);
    if (handled.kind === 'next') return next();
    if (handled.kind === 'error') return next(handled.error);
    if (handled.kind === 'handler' && handler) {
      try {
        await handler(req, res, next, handled.info);
      } catch (error) {
        next(error);
      }
    }
  }

  return Object.assign(rateLimit, controls);
}

/**
 * Concurrency-limiting middleware: at most `limit` requests of one client in progress at once (open
 * uploads, expensive reports), rather than per window. A request's slot is released when its response
 * is done, or when the client goes away; a refused one gets a 429 with problem details.
 *
 * @example
 * app.post('/uploads', concurrencyLimit({ limit: 2, key: byUser((req) => req.user?.id), store }), upload);
 */
export function concurrencyLimit(options: ConcurrencyLimitOptions<Request>): RequestHandler {
  const limiter = createHttpConcurrencyLimiter(options, expressAccess, SETTINGS);
  const handle = concurrencyLifecycle(limiter, nodeResponses);
  return async function concurrencyLimit(req: Request, res: Response, next: NextFunction) {
    const handled = await handle(req, res);
    if (handled.kind === 'next') next();
    else if (handled.kind === 'error') next(handled.error);
  };
}

export * from '@tollgate/core/app-exports';
