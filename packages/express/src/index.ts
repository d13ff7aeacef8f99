/** `@tollgate/express`: Tollgate as Express middleware (Express 4 and 5). */
import {
  type ConcurrencyLimitOptions,
  createHttpConcurrencyLimiter,
  createHttpLimiter,
  type HeaderProfile,
  type RateLimitInfo,
  type RateLimitOptions,
  type RateLimitOutcome,
  type RateLimitRejection,
  type RequestAccess,
  stackHeaders,
} from '@tollgate/core';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** Options of {@link rateLimit}: the shared Tollgate options plus an Express `handler`. */
export interface ExpressRateLimitOptions extends RateLimitOptions<Request, Response> {
  /**
   * Answers a limited request instead of the default 429 problem details. The rate-limit headers
   * (`Retry-After` included) are already set on `res`.
   */
  handler?: (req: Request, res: Response, next: NextFunction, info: RateLimitInfo) => unknown;
}

/** The middleware {@link rateLimit} returns: Express middleware, with its limiter's `resetKey`. */
export interface RateLimitMiddleware extends RequestHandler {
  /**
   * Refills every bucket of `key` in this limiter: an identity as the key function returns it and
   * `req.rateLimit.key` shows it (`'ip:203.0.113.7'`, `'user:42'`). For an admin's unblock.
   */
  resetKey(key: string): Promise<void>;
}

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

const expressAccess: RequestAccess<Request> = {
  ip: (req) => req.ip,
  socketIp: (req) => req.socket.remoteAddress,
  header: (req, name) => {
    const value = req.headers[name];
    return Array.isArray(value) ? value[0] : value;
  },
  trustsEveryProxy: (req) => req.app?.get('trust proxy') === true,
};

/**
 * The frame of Express running middleware or a route handler: `Layer.handle [as handle_request]` in
 * Express 4, `Layer.handleRequest` in Express 5. On the stack of a `rateLimit()` call, it means the
 * limiter is being created per request.
 */
const HANDLING_FRAME = /\bLayer\.(?:handle \[as handle_request\]|handleRequest) /;

/**
 * The header profile of the rate-limit fields on each response so far, so a later limiter on the same
 * response (a route's, after the app-wide one) keeps the fields of one profile. A WeakMap, not a field
 * of the response as in the other adapters: Express's requests and responses each end up with a shape
 * of their own, so a field added to one costs about 2 µs, and a WeakMap entry a tenth of that.
 */
const profileWritten = new WeakMap<Response, HeaderProfile | undefined>();

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
  const limiter = createHttpLimiter(options, expressAccess, {
    adapter: '@tollgate/express',
    inRequestHandler: HANDLING_FRAME.test(new Error().stack ?? ''),
  });
  const handler = options.handler;
  const property = limiter.requestPropertyName;

  async function rateLimit(req: Request, res: Response, next: NextFunction) {
    let outcome: RateLimitOutcome;
    try {
      outcome = await limiter.check(req);
    } catch (error) {
      return next(error);
    }
    if (outcome.kind === 'skipped') return next();
    if (property !== undefined && outcome.info !== undefined) {
      (req as unknown as Record<string, unknown>)[property] = outcome.info;
    }
    const stacked = stackHeaders(outcome, { profile: profileWritten.get(res), get: (name) => res.get(name) });
    for (const name of stacked.remove) res.removeHeader(name);
    // Node's own setHeader: Express's res.set would also lower-case each name to look for Content-Type.
    for (const name in stacked.set) res.setHeader(name, stacked.set[name] as string);
    profileWritten.set(res, stacked.profile);
    if (outcome.kind === 'allowed') {
      limiter.countByResponse(outcome.info, req, res, res);
      return next();
    }
    if (outcome.kind === 'error') return next(outcome.error);
    try {
      if (handler) return await handler(req, res, next, outcome.info);
      endWith(res, await limiter.rejection(req, outcome.info));
    } catch (error) {
      next(error);
    }
  }

  return Object.assign(rateLimit, { resetKey: (key: string) => limiter.resetKey(key) });
}

/**
 * Ends the response with a refusal, whose body and content type are ready to send. Not `res.send`: for a
 * string it would add a charset that application/problem+json lacks, and for bytes it computes an ETag
 * (which means nothing on a 429) and Node writes them apart from the head. A string given to `end` goes
 * with the head in one chunk: in an Express server answering only such 429s, a fifth less CPU each.
 */
function endWith(res: Response, { status, contentType, body, bytes }: RateLimitRejection): void {
  res.statusCode = status;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', bytes.length);
  res.end(body);
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
  const limiter = createHttpConcurrencyLimiter(options, expressAccess, { adapter: '@tollgate/express' });
  return async function concurrencyLimit(req: Request, res: Response, next: NextFunction) {
    try {
      const outcome = await limiter.check(req);
      if (outcome.kind === 'skipped') return next();
      if (outcome.kind === 'error') return next(outcome.error);
      if (outcome.kind === 'limited') {
        return endWith(res, outcome);
      }
      // 'close' comes when the response is done and when the client goes away first.
      res.once('close', outcome.release);
      next();
    } catch (error) {
      next(error);
    }
  };
}

export type {
  ConcurrencyLimitOptions,
  HeaderProfile,
  KeyFunction,
  Policy,
  RateLimitInfo,
  Store,
} from '@tollgate/core';
export {
  byApiKey,
  byIp,
  byUser,
  firstOf,
  MemoryStore,
  RateLimitError,
  RedisStore,
} from '@tollgate/core';
