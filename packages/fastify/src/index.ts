/**
 * `@tollgate/fastify`: Tollgate as a Fastify plugin (Fastify 4 and 5), with per-route
 * `config.rateLimit` options or `false`, and `fastify.rateLimit()` for the routes the plugin does not
 * reach (the 404 handler).
 *
 * For adapter authors: this file is Fastify's code only: its hooks, route options and decorators. A
 * route's limiter comes from the core's `RouteLimiters` group, its per-request handling from
 * `adapterLimiterOf`; the request lifecycle is the core's (`docs/writing-an-adapter.md`).
 */
import {
  type ConcurrencyLimitOptions,
  type KeyControls,
  type RateLimitInfo,
  type RateLimitOptions,
  TollgateOptionError,
} from '@tollgate/core';
import {
  adapterLimiterOf,
  answersLeftmostForwarded,
  concurrencyLifecycle,
  createHttpConcurrencyLimiter,
  type Handled,
  type HttpLimiter,
  keyControls,
  nodeRequestAccess,
  type ResponseAccess,
  RouteLimiters,
} from '@tollgate/core/adapter';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';

/** Options of a limiter: the shared Tollgate options plus a Fastify `handler`. */
export interface FastifyRateLimitOptions extends RateLimitOptions<FastifyRequest, FastifyReply> {
  /**
   * Answers a limited request instead of the default 429 problem details. The rate-limit headers
   * (`Retry-After` included) are already set on `reply`.
   */
  handler?: (request: FastifyRequest, reply: FastifyReply, info: RateLimitInfo) => unknown;
}

/** The lifecycle hook the check runs in. */
export type RateLimitHook = 'onRequest' | 'preValidation' | 'preHandler';

/** Options of the {@link tollgate} plugin: the app-wide limiter, which routes inherit from. */
export interface TollgatePluginOptions extends Partial<FastifyRateLimitOptions> {
  /**
   * `true`: every route registered after the plugin is limited (by one shared limiter, unless the route
   * has its own `config.rateLimit`). `false`: only routes with `config.rateLimit` are. Default: `true`.
   */
  global?: boolean;
  /**
   * When the check runs. `'onRequest'` (default) is cheapest and runs before the route's own onRequest
   * hooks. With `'preValidation'` or `'preHandler'` it runs after the app's and the route's hooks of that
   * stage: use it to key by a user that authentication sets. A route may choose its own.
   */
  hook?: RateLimitHook;
}

/** A route's `config.rateLimit`: options over the plugin's, and the hook its check runs in. */
export interface RouteRateLimitOptions extends Partial<FastifyRateLimitOptions> {
  /** When this route's check runs. Default: the plugin's `hook`. */
  hook?: RateLimitHook;
}

/** A check of one limiter, for any route's `onRequest`, `preValidation` or `preHandler`. */
export interface RateLimitHookHandler extends KeyControls {
  (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined>;
}

/**
 * `fastify.rateLimit(options?)`: a limiter with the plugin's options under `options`, as a hook for
 * routes the plugin does not limit by itself, such as the 404 handler:
 * `app.setNotFoundHandler({ preHandler: app.rateLimit() }, handler)`. Call it once, at startup.
 */
export interface RateLimitDecorator extends KeyControls {
  /**
   * Its {@link KeyControls} reach the plugin's own limiters, the app-wide one and the routes': a key is
   * reset in all, an override set in those with `overrides: true`.
   */
  (options?: Partial<FastifyRateLimitOptions>): RateLimitHookHandler;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** This route's rate limit: options over the plugin's, or `false` for none. */
    rateLimit?: RouteRateLimitOptions | false;
  }
  interface FastifyInstance {
    /** Makes a rate-limit hook from the plugin's options; see `RateLimitDecorator`. */
    rateLimit: RateLimitDecorator;
  }
  interface FastifyRequest {
    /**
     * This request's rate limit, from the last Tollgate limiter that checked it (with the default
     * `requestPropertyName`). `undefined` when none did, or every one skipped it.
     */
    rateLimit?: RateLimitInfo;
  }
}

/** Where the limiters `fastify.rateLimit()` makes are: their messages and default names say so. */
const DECORATED = 'fastify.rateLimit()';

const HOOKS: readonly RateLimitHook[] = ['onRequest', 'preValidation', 'preHandler'];

// Fastify keeps trustProxy to itself; its request's `ip` getter, asked about a made-up request, tells.
const fastifyAccess = nodeRequestAccess<FastifyRequest>((request) =>
  answersLeftmostForwarded(
    (raw) => Object.create(Object.getPrototypeOf(request), { raw: { value: raw } }).ip,
  ),
);

/** Fastify's words for its client-IP setting, which the core's warnings name. */
const CLIENT_IP_SETTING = {
  name: 'Fastify({ trustProxy })',
  trustExactly: 'Fastify({ trustProxy }) with their addresses or their number',
} as const;

const fastifyResponses: ResponseAccess<FastifyRequest, FastifyReply> = {
  node: (reply) => reply.raw,
  getHeader: (reply, name) => reply.getHeader(name),
  setHeaders: (reply, headers) => void reply.headers(headers),
  removeHeader: (reply, name) => void reply.removeHeader(name),
  send: (reply, { status, contentType, body }) => sendAsIs(reply.code(status).type(contentType), body),
};

const tollgatePlugin: FastifyPluginAsync<TollgatePluginOptions> = async (fastify, options) => {
  // Own properties only: a polluted Object.prototype must not switch limiting off.
  const { global: globalOption, hook: hookOption, ...rest } = options;
  const base: Partial<FastifyRateLimitOptions> = Object.setPrototypeOf(rest, null);
  const global = Object.hasOwn(options, 'global') ? globalOption : true;
  const hook = Object.hasOwn(options, 'hook') ? hookOption : 'onRequest';
  if (typeof global !== 'boolean')
    throw new TollgateOptionError('@tollgate/fastify: global must be true or false');
  checkHook(hook, '@tollgate/fastify: hook');
  // Fastify's logger is off unless the app turns it on; Tollgate's warnings must not vanish with it.
  const logger = typeof fastify.log.level === 'string' ? fastify.log : console;
  // Once the app is ready no route or hook can be added: a limiter made then is made per request.
  let ready = false;
  fastify.addHook('onReady', async () => {
    ready = true;
  });
  const limiters = new RouteLimiters<FastifyRequest, FastifyReply, RouteHook>(base, {
    adapter: '@tollgate/fastify',
    access: fastifyAccess,
    clientIpSetting: CLIENT_IP_SETTING,
    logger,
    appWide: global,
    routeOptionsName: 'config.rateLimit',
    inRequestHandler: () => ready,
    make(options: RouteRateLimitOptions, build, where) {
      // A hook `fastify.rateLimit()` makes runs where the app puts it: `hook` is no option there.
      const { hook: stage = hook, ...own } = where === DECORATED ? { ...options, hook } : options;
      checkHook(stage, `@tollgate/fastify (${where}): config.rateLimit.hook`);
      const limiter = build(where === DECORATED ? options : own);
      return { check: rateLimitHook(limiter), stage, limiter };
    },
  });
  // Declared up front, as Fastify asks of request properties, under the name the plugin's options give.
  const property = base.requestPropertyName ?? 'rateLimit';
  if (property !== false && !fastify.hasRequestDecorator(property))
    fastify.decorateRequest(property, undefined);
  const routeHook = (own: RouteRateLimitOptions, route: RouteOptions | RouteSeen, atStartup = true) =>
    limiters.ofRoute(own, `route ${String(route.method)} ${route.url}`, {
      inRequestHandler: atStartup ? ready : false,
    });

  /** Marks the routes this plugin limits by itself, on their config (Fastify copies it, symbols too). */
  const seen = Symbol('tollgate.routeSeen');

  fastify.addHook('onRoute', (route: RouteOptions) => {
    route.config = { ...route.config, [seen]: true } as NonNullable<RouteOptions['config']>;
    const own = ownRateLimit(route.config);
    if (own === false) return;
    const made = own === undefined ? limiters.appWide : routeHook(own, route);
    if (made === undefined) return;
    const { check, stage } = made;
    // onRequest: first, so a limited request costs as little as possible. A later hook is chosen to run
    // after something (authentication, say), so there the check goes last.
    const hooks = toArray(route[stage]);
    route[stage] = (stage === 'onRequest' ? [check, ...hooks] : [...hooks, check]) as never;
  });

  // A route added before this plugin had loaded (`app.register(tollgate)` without `await`) never reached
  // onRoute, yet Fastify runs the app's own hooks for it: this one limits it, at the plugin's `hook`,
  // rather than letting it go unlimited (its limiter is made once, as a route's always is). The 404
  // handler is left alone, as for routes the plugin saw.
  fastify.addHook(hook as 'onRequest', function rateLimitUnseenRoute(request, reply, done) {
    const config = request.routeOptions.config as RouteSeen;
    if (config[seen] === true || request.is404) return done();
    const own = ownRateLimit(config);
    const made =
      own === false ? undefined : own === undefined ? limiters.appWide : routeHook(own, config, false);
    if (made === undefined) return done();
    made.limiter.warnOnce('TOLLGATE_ROUTE_NOT_SEEN', () => notSeenMessage(config));
    made.check(request, reply).then(() => done(), done);
  });

  const decorator = (own: Partial<FastifyRateLimitOptions> = {}) =>
    limiters.apart(own, DECORATED, '@tollgate/fastify: fastify.rateLimit() options').check;
  // Registered twice in one context (two app-wide limiters), the first registration's decorator stays.
  if (!fastify.hasDecorator('rateLimit'))
    fastify.decorate('rateLimit', Object.assign(decorator, keyControls(limiters)));
};

function rateLimitHook(limiter: HttpLimiter<FastifyRequest, FastifyReply>): RateLimitHookHandler {
  const { handle, handler, controls } = adapterLimiterOf<
    FastifyRequest,
    FastifyReply,
    NonNullable<FastifyRateLimitOptions['handler']>
  >(limiter, fastifyResponses);
  async function rateLimit(request: FastifyRequest, reply: FastifyReply) {
    const handled = await handle(request, reply);
    if (handled.kind === 'handler' && handler) await handler(request, reply, handled.info);
    return answered(handled, reply);
  }
  return Object.assign(rateLimit, controls);
}

/** What a hook returns (or throws) once the lifecycle has run: nothing lets the request go on. */
function answered(handled: Handled, reply: FastifyReply): FastifyReply | undefined {
  if (handled.kind === 'next') return undefined;
  if (handled.kind === 'error') throw handled.error;
  if (handled.kind === 'stopped') reply.hijack(); // nobody to answer: no later hook, no handler
  return reply;
}

/**
 * Sends a body that is already in its media type, as a string: Node writes a string with the head in
 * one chunk (bytes go in a second one, about a tenth more CPU per refusal in a 429-only server). Through
 * an identity serializer, because for a string sent plainly Fastify would add a charset that
 * `application/problem+json` lacks.
 */
function sendAsIs(reply: FastifyReply, body: string): FastifyReply {
  return reply.serializer(asIs).send(body);
}

function asIs(body: string): string {
  return body;
}

/** A route's check, the stage it runs in, and the limiter behind it. */
interface RouteHook {
  readonly check: RateLimitHookHandler;
  readonly stage: RateLimitHook;
  readonly limiter: HttpLimiter<FastifyRequest, FastifyReply>;
}

function notSeenMessage({ method, url }: RouteSeen): string {
  return (
    `route ${String(method)} ${url} was added before the plugin had loaded, so it is limited by a hook ` +
    "of the app, at the plugin's hook. Register the plugin with `await app.register(tollgate, ...)` " +
    'before adding routes, so each route is limited as it asks.'
  );
}

/** A route's config as Fastify hands it to hooks: the app's config, its url and method, and marks. */
interface RouteSeen {
  readonly url: string;
  readonly method: string | readonly string[];
  readonly [mark: symbol]: unknown;
}

/** A route config's own `rateLimit`: never one an app's polluted `Object.prototype` supplies. */
function ownRateLimit(config: object | undefined): RouteRateLimitOptions | false | undefined {
  if (config === undefined || !Object.hasOwn(config, 'rateLimit')) return undefined;
  return (config as { rateLimit?: RouteRateLimitOptions | false }).rateLimit;
}

function checkHook(hook: unknown, what: string): asserts hook is RateLimitHook {
  if (!HOOKS.includes(hook as RateLimitHook))
    throw new TollgateOptionError(`${what} must be one of ${HOOKS.join(', ')}`);
}

function toArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/**
 * The plugin. Register it before the routes it should limit. Without options it limits each client IP to
 * 100 requests per minute; `limit: 0` (here or in a route's `config.rateLimit`) refuses every request.
 *
 * @example
 * await app.register(tollgate); // 100 per minute per client IP
 * await app.register(tollgate, { limit: 100, window: '1m', store });
 * app.get('/search', { config: { rateLimit: { limit: 10, window: '1s' } } }, search);
 * app.get('/health', { config: { rateLimit: false } }, health);
 * app.setNotFoundHandler({ preHandler: app.rateLimit({ limit: 10, window: '1m' }) }, notFound);
 */
export const tollgate = fp(tollgatePlugin, { fastify: '4.x || 5.x', name: '@tollgate/fastify' });

/**
 * A concurrency-limiting hook: at most `limit` requests of one client in progress at once (open uploads,
 * expensive reports), rather than per window. Use it as a route's `onRequest` (or any later hook, to key
 * by what authentication sets). A request's slot is released when its response is done, or when the
 * client goes away; a refused one gets a 429 with problem details. No plugin needed.
 *
 * @example
 * app.post('/uploads', { onRequest: concurrencyLimit({ limit: 2, store }) }, upload);
 */
export function concurrencyLimit(options: ConcurrencyLimitOptions<FastifyRequest>) {
  const limiter = createHttpConcurrencyLimiter(options, fastifyAccess, {
    adapter: '@tollgate/fastify',
    clientIpSetting: CLIENT_IP_SETTING,
  });
  const handle = concurrencyLifecycle(limiter, fastifyResponses);
  return async function concurrencyLimit(request: FastifyRequest, reply: FastifyReply) {
    return answered(await handle(request, reply), reply);
  };
}

export * from '@tollgate/core/app-exports';
