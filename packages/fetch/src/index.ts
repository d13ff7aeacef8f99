/**
 * `@tollgate/fetch`: Tollgate for Web-standard handlers, from a `Request` to a `Response` (Next.js route
 * handlers, `Bun.serve`, `Deno.serve`, SvelteKit's `handle`, React Router loaders and actions).
 *
 * For adapter authors: this file is the Fetch API's code only: a `Request` in, a `Response` out
 * (`WebAnswer`), one `createAdapterLimiter` call per limiter. The request lifecycle is the core's
 * (`docs/writing-an-adapter.md`).
 */
import type { ConcurrencyLimitOptions, KeyControls, RateLimitInfo, RateLimitOptions } from '@tollgate/core';
import {
  concurrencyLifecycle,
  createAdapterLimiter,
  createHttpConcurrencyLimiter,
  handledError,
  type RequestAccess,
  suppliedAddressAccess,
  type WaitUntilContext,
  WebAnswer,
} from '@tollgate/core/adapter';

const ADAPTER = '@tollgate/fetch';

/** The README section with the Next.js recipes, which the messages below send Next.js users to. */
const NEXT_RECIPES = 'the @tollgate/fetch README, "Next.js: the client address"';

/**
 * Where a Fetch handler's client IP comes from, as the core's warnings and errors say it. A Next.js app
 * that copied Vercel's recipe and runs on `next start` meets both: they name what it can change.
 */
const CLIENT_IP_SETTING = {
  name:
    "the ip option, a function that returns the client's address, behind a proxy from the header it " +
    'sets (on Vercel, x-real-ip)',
  noAddress:
    'the ip option returned no address for this request, and the key function no identity, so the ' +
    'request was refused with an error. On Next.js, x-real-ip is set by Vercel, not by next start: ' +
    'behind your own reverse proxy, return the X-Forwarded-For entry it appends; with no proxy in front ' +
    `of next start, no header can be trusted. See ${NEXT_RECIPES}, and its recipes for Bun, Deno and Node`,
  untrustedForwardedFor:
    'X-Forwarded-For arrived but does not name the address the ip option returned, so that address came ' +
    "from elsewhere: the connection's, which behind a proxy is the proxy's and puts every client in one " +
    'bucket, or a header a client can write itself (x-real-ip, where no proxy or platform overwrites it). ' +
    `Behind a reverse proxy, return the X-Forwarded-For entry it appends: see ${NEXT_RECIPES}.`,
} as const;

/** Where a request's client address comes from: the Fetch API has none of its own. */
export interface ClientAddressOption<Args extends unknown[] = []> {
  /**
   * The client IP, for `byIp()` (the default key) and the fallback of every key: given the request and
   * the handler's other arguments (Deno's `info`, @hono/node-server's `env`). Required unless `key` is
   * given; a request it gives no address for is then refused with a `ClientAddressError` when the key
   * gives no identity either, never limited in one bucket shared by all such requests. Recipes per
   * runtime are in the README. Default: none.
   *
   * @example
   * Deno.serve(withRateLimit(handler, { ip: (_request, info) => info.remoteAddr.hostname }));
   */
  ip?: (request: Request, ...args: Args) => string | undefined;
}

/**
 * Options of {@link rateLimit} and {@link withRateLimit}: the shared Tollgate options, the client
 * address, and `onLimited`. `requestWasSuccessful` gets `(request, response)`.
 *
 * @example
 * const options: FetchRateLimitOptions = { limit: 5, window: '15m', ip: (request) => request.headers.get('x-real-ip') ?? undefined };
 */
export interface FetchRateLimitOptions<Args extends unknown[] = []>
  extends Omit<RateLimitOptions<Request, Response>, 'handler' | 'requestPropertyName'>,
    ClientAddressOption<Args> {
  /**
   * Answers a limited request instead of the default 429 problem details; the rate-limit headers
   * (`Retry-After` included) are added to the `Response` it returns. Not with `throwOnLimit`.
   */
  onLimited?: (request: Request, info: RateLimitInfo) => Response | Promise<Response>;
}

/**
 * Options of {@link concurrencyLimit} and {@link withConcurrencyLimit}.
 *
 * @example
 * const options: FetchConcurrencyLimitOptions = { limit: 2, ip: (request) => request.headers.get('x-real-ip') ?? undefined };
 */
export interface FetchConcurrencyLimitOptions<Args extends unknown[] = []>
  extends ConcurrencyLimitOptions<Request>,
    ClientAddressOption<Args> {}

/**
 * What {@link FetchRateLimiter.check} decided. `allowed: true`: run the handler, then send
 * `apply(response)`, which adds `headers` and, for a refund after the response
 * (`skipSuccessfulRequests`, `skipFailedRequests`), watches its end: the Node.js response's when
 * `check` was given @hono/node-server's `env` first among the handler's arguments, else its body's. A
 * response never applied stays counted. `info` is `undefined` when the limiter skipped the request
 * (`skip`, `allowList`); in dry run `info.decision.allowed` may be `false`. `allowed: false`: send
 * `response` (a 429, a 403 for a cost no wait can cover, or `onLimited`'s), headers included.
 * `response` is declared on both variants, `undefined` when allowed, so that `!result.allowed` narrows
 * under the `strict: false` that Next.js writes into a new app's tsconfig.json too.
 *
 * @example
 * const result = await limiter.check(request);
 * if (!result.allowed) return result.response;
 * return result.apply(Response.json({ remaining: result.info?.remaining }));
 */
export type RateLimitResult =
  | {
      readonly allowed: true;
      readonly info: RateLimitInfo | undefined;
      /** The rate-limit headers of every limiter that checked this request, stacked. */
      readonly headers: Readonly<Record<string, string>>;
      apply(response: Response): Response;
      /** Only a refused request has an answer to send. */
      readonly response?: undefined;
    }
  | { readonly allowed: false; readonly info: RateLimitInfo; readonly response: Response };

/**
 * What {@link FetchConcurrencyLimiter.check} decided. `allowed: true`: the request holds a slot until
 * `apply(response)` was sent or its client went away (on @hono/node-server, given its `env`: until the
 * Node.js response closes; elsewhere until its body is read to its end or cancelled); `release()`
 * gives it back when no response will be sent (the handler threw). `allowed: false`: send `response`,
 * a 429. As in {@link RateLimitResult}, `response` is on both variants so that `!slot.allowed` narrows
 * without `strict`.
 *
 * @example
 * const slot = await uploads.check(request);
 * if (!slot.allowed) return slot.response;
 * return slot.apply(await upload(request));
 */
export type ConcurrencyResult =
  | {
      readonly allowed: true;
      apply(response: Response): Response;
      release(): void;
      /** Only a refused request has an answer to send. */
      readonly response?: undefined;
    }
  | { readonly allowed: false; readonly response: Response };

/**
 * A rate limiter for `Request`s, built once: {@link rateLimit}.
 *
 * @example
 * const result = await limiter.check(request, ...handlerArguments);
 */
export interface FetchRateLimiter<Args extends unknown[] = []> extends KeyControls {
  /** Decides a request and charges it; rejects with a `RateLimitError` (`throwOnLimit`) or a store error (`onStoreError: 'deny'`). */
  check(request: Request, ...args: Args): Promise<RateLimitResult>;
}

/**
 * A concurrency limiter for `Request`s, built once: {@link concurrencyLimit}.
 *
 * @example
 * const slot = await limiter.check(request);
 */
export interface FetchConcurrencyLimiter<Args extends unknown[] = []> {
  check(request: Request, ...args: Args): Promise<ConcurrencyResult>;
}

/**
 * A Web-standard handler: a `Request` (and the runtime's other arguments) to a `Response`.
 *
 * @example
 * const hello: FetchHandler = () => new Response('hello');
 */
export type FetchHandler<Req extends Request = Request, Args extends unknown[] = []> = (
  request: Req,
  ...args: Args
) => Response | Promise<Response>;

/** How the core's lifecycle writes each request's answer; the info goes on the answer, for the result. */
const answerAccess = WebAnswer.access<Request>((request, _property, info) => {
  WebAnswer.for(request).info = info;
});

/**
 * A rate limiter whose `check` tells a handler to go on (with headers to add to its `Response`) or
 * hands it the 429 to send. Build it once, at module scope.
 *
 * @example
 * const login = rateLimit({ limit: 5, window: '15m', ip: (request) => request.headers.get('x-real-ip') ?? undefined });
 * export async function POST(request: Request) {
 *   const result = await login.check(request);
 *   if (!result.allowed) return result.response;
 *   return result.apply(await signIn(request));
 * }
 */
export function rateLimit<Args extends unknown[] = []>(
  options: FetchRateLimitOptions<Args>,
): FetchRateLimiter<Args> {
  const { ip, ...shared } = options ?? ({} as FetchRateLimitOptions<Args>);
  const { access, rememberArgs } = requestAccess(ip, shared.key);
  const {
    handle,
    handler: onLimited,
    controls,
  } = createAdapterLimiter<Request, WebAnswer, NonNullable<FetchRateLimitOptions<Args>['onLimited']>>(
    WebAnswer.options(shared),
    { requests: access, responses: answerAccess },
    {
      adapter: ADAPTER,
      clientIpSetting: CLIENT_IP_SETTING,
      handlerName: 'onLimited',
      notHere: {
        requestPropertyName:
          "there is no requestPropertyName option here; use the check's result: result.info",
      },
    },
  );
  return {
    async check(request, ...args) {
      rememberArgs(request, args);
      const answer = WebAnswer.for(request, request.method, args[0], waitUntilContextIn(args)).checking();
      const handled = await handle(request, answer);
      if (handled.kind === 'next') {
        const apply = (response: Response) => answer.finish(response);
        return { allowed: true, info: answer.info, headers: answer.headers, apply };
      }
      if (handled.kind === 'handler') {
        const response = await (onLimited as NonNullable<typeof onLimited>)(request, handled.info);
        return { allowed: false, info: handled.info, response: answer.finish(response) };
      }
      if (handled.kind === 'answered') {
        return { allowed: false, info: answer.info as RateLimitInfo, response: answer.refusal() };
      }
      throw handledError(handled, ADAPTER);
    },
    ...controls,
  };
}

/**
 * Wraps a handler in a {@link rateLimit} limiter: a limited request gets the 429, an allowed one the
 * handler's `Response` with the rate-limit headers. The handler's other arguments (Next.js's
 * `context`, Deno's `info`) are passed through, and to `ip`. A handler that throws is judged as the 500
 * the runtime answers. The wrapped handler has the limiter's {@link KeyControls}.
 *
 * @example
 * // app/api/hello/route.ts
 * export const GET = withRateLimit(() => Response.json({ hello: 'world' }), {
 *   limit: 10,
 *   window: '1m',
 *   ip: (request) => request.headers.get('x-real-ip') ?? undefined, // set by the platform: see the README
 * });
 */
export function withRateLimit<Req extends Request = Request, Args extends unknown[] = []>(
  handler: FetchHandler<Req, Args>,
  options: FetchRateLimitOptions<Args>,
): FetchHandler<Req, Args> & KeyControls {
  const { check, ...controls } = rateLimit(options);
  return Object.assign(guarded(check, handler), controls);
}

/**
 * A concurrency limiter: at most `limit` requests of one client in progress at once, each holding its
 * slot until its response's body is read to the end or cancelled (streamed bodies included).
 *
 * @example
 * const exports = concurrencyLimit({ limit: 2, ip: (request) => request.headers.get('x-real-ip') ?? undefined });
 * const slot = await exports.check(request);
 * if (!slot.allowed) return slot.response;
 * return slot.apply(new Response(reportStream()));
 */
export function concurrencyLimit<Args extends unknown[] = []>(
  options: FetchConcurrencyLimitOptions<Args>,
): FetchConcurrencyLimiter<Args> {
  const { ip, ...shared } = options ?? ({} as FetchConcurrencyLimitOptions<Args>);
  const { access, rememberArgs } = requestAccess(ip, shared.key);
  const handle = concurrencyLifecycle(
    createHttpConcurrencyLimiter(shared, access, { adapter: ADAPTER, clientIpSetting: CLIENT_IP_SETTING }),
    answerAccess,
  );
  return {
    async check(request, ...args) {
      rememberArgs(request, args);
      const answer = WebAnswer.for(request, request.method, args[0], waitUntilContextIn(args));
      const handled = await handle(request, answer);
      if (handled.kind === 'next') {
        return {
          allowed: true,
          apply: (response) => answer.finish(response),
          release: () => answer.end(false),
        };
      }
      if (handled.kind === 'answered') return { allowed: false, response: answer.refusal() };
      throw handledError(handled, ADAPTER);
    },
  };
}

/**
 * Wraps a handler in a {@link concurrencyLimit} limiter; the slot is given back when the handler's
 * response body is done or cancelled, or the handler throws.
 *
 * @example
 * Bun.serve({ fetch: withConcurrencyLimit(exportReport, { limit: 1, ip: (request) => server.requestIP(request)?.address }) });
 */
export function withConcurrencyLimit<Req extends Request = Request, Args extends unknown[] = []>(
  handler: FetchHandler<Req, Args>,
  options: FetchConcurrencyLimitOptions<Args>,
): FetchHandler<Req, Args> {
  return guarded(concurrencyLimit(options).check, handler);
}

/** The handler behind a check: it runs only when allowed, and its answer ends the request's. */
function guarded<Req extends Request, Args extends unknown[]>(
  check: (request: Req, ...args: Args) => Promise<RateLimitResult | ConcurrencyResult>,
  handler: FetchHandler<Req, Args>,
): FetchHandler<Req, Args> {
  return async function limited(request, ...args) {
    const result = await check(request, ...args);
    if (!result.allowed) return result.response;
    let response: Response;
    try {
      response = await handler(request, ...args);
    } catch (error) {
      WebAnswer.for(request).fail();
      throw error;
    }
    return result.apply(response);
  };
}

/**
 * The handler argument that keeps a request alive for work after its response, when the runtime passes
 * one: Cloudflare Workers' `ctx` (after `env`), Next.js middleware's `event`. On Workers a refund or a
 * slot's release sent once the body was sent would be cut off with the request without it.
 */
function waitUntilContextIn(args: readonly unknown[]): WaitUntilContext | undefined {
  for (const arg of args) {
    if (typeof (arg as Partial<WaitUntilContext> | null)?.waitUntil === 'function')
      return arg as WaitUntilContext;
  }
  return undefined;
}

/**
 * How the core reads a `Request`. With no socket, `ip` serves as the peer's address too: one that ignores
 * an `X-Forwarded-For` not naming it is warned about (`TOLLGATE_UNTRUSTED_FORWARDED_FOR`).
 */
function requestAccess<Args extends unknown[]>(ip: ClientAddressOption<Args>['ip'], key: unknown) {
  // The handler's other arguments, for `ip`: the core reads a request alone. Kept on the request under
  // this limiter's own symbol (a property costs less per request than a WeakMap entry).
  const ARGS = Symbol('tollgate.handlerArgs');
  type WithArgs = Request & { [ARGS]?: Args };
  const rememberArgs = (request: WithArgs, args: Args) => {
    request[ARGS] = args;
  };
  // Anything but a function goes to the core as it is, to be refused there.
  const ipOf =
    typeof ip === 'function'
      ? (request: WithArgs) => ip(request, ...(request[ARGS] ?? ([] as unknown as Args)))
      : (ip as undefined);
  const access = suppliedAddressAccess<WithArgs>(
    {
      ip: ipOf,
      header: (request, name) => request.headers.get(name) ?? undefined,
    },
    {
      adapter: ADAPTER,
      key,
      missing:
        "give ip, a function returning the client's address (a Request has none; the README shows how " +
        'for Next.js, Bun, Deno and Node), or a key that identifies every request',
    },
  );
  return { access: access as RequestAccess<Request>, rememberArgs };
}

export * from '@tollgate/core/app-exports';
