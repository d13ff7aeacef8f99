/** What an adapter builds its rate-limiting middleware from, in one call. */
import type { RequestAccess } from '../identity/request-keys.js';
import type { AdapterSettings, RateLimitOptions } from '../options/option-types.js';
import { createHttpLimiter, type HttpLimiter } from './http-limiter.js';
import { type KeyControls, keyControls } from './key-controls.js';
import { type Handled, type ResponseAccess, rateLimitLifecycle } from './lifecycle.js';

/** A framework as the core reads its requests and writes its responses. */
export interface Platform<Req, Res> {
  /** How the core reads a request: headers, method, path, the client's address. */
  readonly requests: RequestAccess<Req>;
  /** How the core writes a response: the Node.js response under it, or a Fetch answer. */
  readonly responses: ResponseAccess<Req, Res>;
}

/** A rate limiter as an adapter's middleware uses it. */
export interface AdapterLimiter<Req, Res, Handler> {
  /** The limiter, for what an adapter does beyond a request (`warnOnce`, its name). */
  readonly limiter: HttpLimiter<Req, Res>;
  /** Runs one request through the lifecycle; the answer says what the middleware does next. */
  readonly handle: (request: Req, response: Res) => Promise<Handled>;
  /** The app's own handler option (named by `settings.handlerName`), as given; `undefined`: none. */
  readonly handler: Handler | undefined;
  /** `resetKey`, `setOverride` and the rest, for the adapter to put on its middleware. */
  readonly controls: KeyControls;
}

/**
 * Builds a rate limiter for an adapter: validates the options once (naming `settings.adapter` in every
 * message), and gives the middleware its per-request `handle`, the app's `handler` in the adapter's own
 * type, and its key controls. `Handler` is the type of the adapter's handler option.
 *
 * @example
 * const { handle, handler, controls } = createAdapterLimiter<IncomingMessage, ServerResponse, MyHandler>(
 *   options,
 *   { requests: nodeRequestAccess(), responses: nodeResponses },
 *   { adapter: 'my-adapter' },
 * );
 */
export function createAdapterLimiter<Req, Res, Handler = never>(
  options: RateLimitOptions<Req, Res>,
  platform: Platform<Req, Res>,
  settings: AdapterSettings,
): AdapterLimiter<Req, Res, Handler> {
  return adapterLimiterOf<Req, Res, Handler>(
    createHttpLimiter(options, platform.requests, settings),
    platform.responses,
  );
}

/**
 * {@link createAdapterLimiter} for a limiter built elsewhere, such as one of a `RouteLimiters` group:
 * its per-request `handle` on `responses`, its `handler` and its key controls.
 */
export function adapterLimiterOf<Req, Res, Handler = never>(
  limiter: HttpLimiter<Req, Res>,
  responses: ResponseAccess<Req, Res>,
): AdapterLimiter<Req, Res, Handler> {
  return {
    limiter,
    handle: rateLimitLifecycle(limiter, responses),
    handler: limiter.handler as Handler | undefined,
    controls: keyControls(limiter),
  };
}
