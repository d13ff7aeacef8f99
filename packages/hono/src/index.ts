/**
 * `@tollgate/hono`: Tollgate as Hono middleware, app-wide or per route, on every runtime Hono runs on.
 *
 * For adapter authors: this file is Hono's code only: the client's address from Hono's context, a
 * Fetch answer (`WebAnswer`) for the response, one `createAdapterLimiter` call per limiter. The request
 * lifecycle is the core's (`docs/writing-an-adapter.md`).
 */
import {
  type ConcurrencyLimitOptions,
  type KeyControls,
  RateLimitError,
  type RateLimitInfo,
  type RateLimitOptions,
  TollgateOptionError,
} from '@tollgate/core';
import {
  concurrencyLifecycle,
  createAdapterLimiter,
  createHttpConcurrencyLimiter,
  type Handled,
  handledError,
  type RequestAccess,
  suppliedAddressAccess,
  type WaitUntilContext,
  WebAnswer,
} from '@tollgate/core/adapter';
import type { Context, MiddlewareHandler, Next } from 'hono';
import type { GetConnInfo } from 'hono/conninfo';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

const ADAPTER = '@tollgate/hono';

/**
 * Whether this is Cloudflare Workers (workerd, whose user agent says so), where a request's I/O ends with
 * it: work after the response goes to the request's `executionCtx.waitUntil`. Asked once, since
 * elsewhere Hono's `executionCtx` throws for want of one, an exception per request for nothing.
 */
const ON_WORKERS = (() => {
  const userAgent = (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent;
  return typeof userAgent === 'string' && userAgent.startsWith('Cloudflare-Workers');
})();

/** Hono's words for where the client IP comes from, which the core's warnings name. */
const CLIENT_IP_SETTING = {
  name:
    "the ip option, a function that returns the client's address, behind a proxy from the header it sets " +
    "(getConnInfo gives the socket's: the proxy's)",
} as const;

/** Where a request's client address comes from: Hono's connection info for the runtime, or your own. */
export interface ClientAddressOptions {
  /**
   * Hono's `getConnInfo` for the runtime the app runs on (`@hono/node-server/conninfo`, `hono/bun`,
   * `hono/deno`, `hono/cloudflare-workers`, `hono/aws-lambda`, …): the peer's address is the client IP
   * unless `ip` says otherwise. Give it, or `ip`, unless `key` identifies every request. Default: none.
   *
   * @example
   * import { getConnInfo } from '@hono/node-server/conninfo';
   * app.use(rateLimit({ limit: 100, window: '1m', getConnInfo }));
   */
  getConnInfo?: GetConnInfo;
  /**
   * The client IP, when it is not the peer's address: behind a proxy, the one the proxy sets (trust
   * only a header your proxy overwrites). Default: `getConnInfo(c).remote.address`.
   *
   * @example
   * rateLimit({ getConnInfo, ip: (c) => c.req.header('x-real-ip') }); // nginx: proxy_set_header X-Real-IP $remote_addr
   */
  ip?: (c: Context) => string | undefined;
}

/**
 * Options of {@link rateLimit}: the shared Tollgate options, the client address, and a Hono `handler`.
 * `requestWasSuccessful` gets `(c, response)`.
 *
 * @example
 * const options: HonoRateLimitOptions = { limit: 5, window: '15m', getConnInfo, skipSuccessfulRequests: true };
 */
export interface HonoRateLimitOptions
  extends Omit<RateLimitOptions<Context, Response>, 'handler'>,
    ClientAddressOptions {
  /**
   * Answers a limited request instead of the default 429 problem details. The rate-limit headers
   * (`Retry-After` included) are added to the `Response` it returns.
   */
  handler?: (c: Context, info: RateLimitInfo) => Response | Promise<Response>;
}

/**
 * Options of {@link concurrencyLimit}.
 *
 * @example
 * const options: HonoConcurrencyLimitOptions = { limit: 2, getConnInfo };
 */
export interface HonoConcurrencyLimitOptions extends ConcurrencyLimitOptions<Context>, ClientAddressOptions {}

/**
 * The context variables a limiter sets: `c.get('rateLimit')`, the info of the last limiter that
 * checked the request (with the default `requestPropertyName`); `undefined` when none did, or every one
 * skipped it. Importing this package also declares it in Hono's `ContextVariableMap`, as Hono's own
 * middleware do, so `c.get('rateLimit')` is typed in every app; `Variables: RateLimitVariables` says so
 * explicitly.
 *
 * @example
 * const app = new Hono<{ Variables: RateLimitVariables }>();
 * app.get('/me', (c) => c.json({ remaining: c.get('rateLimit')?.remaining }));
 */
export type RateLimitVariables = { rateLimit?: RateLimitInfo };

declare module 'hono' {
  interface ContextVariableMap extends RateLimitVariables {}
}

/**
 * The middleware {@link rateLimit} returns, with its limiter's {@link KeyControls} (`resetKey`,
 * `setOverride`, …), each taking a key as `c.get('rateLimit').key` shows it.
 *
 * @example
 * await loginLimit.resetKey('ip:203.0.113.7');
 */
export interface RateLimitMiddleware extends MiddlewareHandler, KeyControls {}

/** Hono's compose running a middleware: on the stack of a `rateLimit()` call, a limiter made per request. */
const HANDLING_FRAME = /[\\/]hono[\\/]dist[\\/](?:cjs[\\/])?compose\.js:/;

/**
 * How the core's lifecycle writes each request's answer; the info goes to `c.set`. A client that goes
 * away aborts its `Request`'s signal (on @hono/node-server, when its connection closes early).
 */
const answerAccess = WebAnswer.access<Context>(
  (c, property, info) => {
    (c.set as (key: string, value: unknown) => void)(property, info);
  },
  (c) => c.req.raw.signal,
);

/**
 * Rate-limiting middleware, app-wide (`app.use`) or on a route; each call is its own limiter with its
 * own buckets (unless two share a `name`). The request's `RateLimitInfo` is `c.get('rateLimit')`. A
 * limiter that counts only some responses (`skipSuccessfulRequests`) judges the response once its body
 * is sent, streamed ones included.
 *
 * @example
 * import { getConnInfo } from '@hono/node-server/conninfo';
 * app.use(rateLimit({ limit: 100, window: '1m', getConnInfo }));
 * app.post('/login', rateLimit({ limit: 5, window: '15m', getConnInfo, skipSuccessfulRequests: true }), login);
 */
export function rateLimit(options: HonoRateLimitOptions): RateLimitMiddleware {
  const given = options ?? ({} as HonoRateLimitOptions);
  const { getConnInfo: _getConnInfo, ip: _ip, handler, ...shared } = given;
  const { handle, controls } = createAdapterLimiter<Context, WebAnswer>(
    WebAnswer.options({ ...shared, ...(handler === undefined ? {} : { handler }) }),
    { requests: requestAccess(given, shared.key), responses: answerAccess },
    {
      adapter: ADAPTER,
      clientIpSetting: CLIENT_IP_SETTING,
      inRequestHandler: HANDLING_FRAME.test(new Error().stack ?? ''),
    },
  );
  return Object.assign(middleware(handle, true, handler), controls);
}

/**
 * Concurrency-limiting middleware: at most `limit` requests of one client in progress at once. A
 * request's slot is released when its response body is sent to the end or cancelled (the client went
 * away), streamed ones included; a refused one gets a 429 with problem details.
 *
 * @example
 * app.post('/uploads', concurrencyLimit({ limit: 2, getConnInfo }), upload);
 */
export function concurrencyLimit(options: HonoConcurrencyLimitOptions): MiddlewareHandler {
  const given = options ?? ({} as HonoConcurrencyLimitOptions);
  const { getConnInfo: _getConnInfo, ip: _ip, ...shared } = given;
  const access = requestAccess(given, shared.key);
  const limiter = createHttpConcurrencyLimiter(shared, access, {
    adapter: ADAPTER,
    clientIpSetting: CLIENT_IP_SETTING,
  });
  return middleware(concurrencyLifecycle(limiter, answerAccess), false);
}

/**
 * The middleware around a limiter's lifecycle: the rest of the chain for a request it lets through,
 * else the refusal, or the `handler` option's answer. `rateLimit` marks each request's answer as
 * `checking`, so the info it exposes is its own.
 */
function middleware(
  handle: (c: Context, answer: WebAnswer) => Promise<Handled>,
  checking: boolean,
  handler?: HonoRateLimitOptions['handler'],
): MiddlewareHandler {
  return async function limited(c, next) {
    // On @hono/node-server, `c.env` holds the Node.js response, whose end is the answer's.
    const answer = WebAnswer.for(c, c.req.method, c.env, executionContextOf(c));
    const handled = await handle(c, checking ? answer.checking() : answer);
    if (handled.kind === 'next') return finishAfter(c, next, answer);
    if (handled.kind === 'handler' && handler) return answer.finish(await handler(c, handled.info));
    if (handled.kind === 'answered') return refuse(c, answer);
    throw failure(handled);
  };
}

/**
 * The refusal, through `c.body`, so that headers earlier middleware set on `c` (CORS) are kept. Its
 * headers go as `c.body`'s third argument, a record Hono copies as it is, rather than in its `init`,
 * which Hono turns into a `Headers` of its own first.
 */
function refuse(c: Context, answer: WebAnswer): Response {
  return answer.refusal((body, init) => {
    const status = init.status as ContentfulStatusCode;
    const headers = init.headers as Record<string, string>;
    return body === null ? c.body(null, status, headers) : c.body(body, status, headers);
  });
}

/** Runs the rest of the chain, then sends its response with the headers, its end watched when needed. */
async function finishAfter(c: Context, next: Next, answer: WebAnswer): Promise<void> {
  try {
    await next();
  } catch (error) {
    // Hono answers an Error thrown downstream through app.onError; anything else thrown passes through here.
    answer.fail();
    throw error;
  }
  const finished = answer.finish(c.res);
  if (finished !== c.res) c.res = finished;
}

/** The request's ExecutionContext on Workers, for the work after its response; elsewhere `undefined`. */
function executionContextOf(c: Context): WaitUntilContext | undefined {
  if (!ON_WORKERS) return undefined;
  try {
    return c.executionCtx;
  } catch {
    return undefined; // app.request() without one
  }
}

/** How the core reads a Hono request; the peer's address serves as the IP unless `ip` is given. */
function requestAccess({ getConnInfo, ip }: ClientAddressOptions, key: unknown): RequestAccess<Context> {
  for (const [name, value] of Object.entries({ getConnInfo, ip })) {
    if (value !== undefined && typeof value !== 'function')
      throw new TollgateOptionError(`${ADAPTER}: ${name} must be a function`);
  }
  const peer = getConnInfo && ((c: Context) => getConnInfo(c).remote.address);
  return suppliedAddressAccess<Context>(
    { ip, peer, header: (c, name) => c.req.header(name) },
    {
      adapter: ADAPTER,
      key,
      missing:
        'give getConnInfo (from hono/<runtime>, e.g. @hono/node-server/conninfo) or ip, so that each ' +
        'client gets a bucket of its own, or a key that identifies every request',
    },
  );
}

/**
 * What the middleware throws, for `app.onError`: the app's error (the store's, a `RateLimitError` with
 * `throwOnLimit`). A `RateLimitError` gets `getResponse()`, as Hono's `HTTPException` has, so Hono's
 * default error handling answers it with its status and headers instead of a 500.
 */
function failure(handled: Handled): unknown {
  const error = handledError(handled, ADAPTER);
  if (error instanceof RateLimitError && !('getResponse' in error)) {
    const { message, status, headers } = error;
    Object.defineProperty(error, 'getResponse', { value: () => new Response(message, { status, headers }) });
  }
  return error;
}

export * from '@tollgate/core/app-exports';
