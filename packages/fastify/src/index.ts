/**
 * `@tollgate/fastify`: Tollgate as a Fastify plugin (Fastify 4 and 5), with per-route
 * `config.rateLimit` options or `false`.
 */
import {
  createHttpLimiter,
  type HttpLimiter,
  mergeRateLimitOptions,
  type RateLimitInfo,
  type RateLimitOptions,
  type RequestAccess,
  validateInheritedOptions,
} from '@tollgate/core';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';

/** Options of a limiter: the shared Tollgate options plus a Fastify `handler`. */
export interface FastifyRateLimitOptions extends RateLimitOptions<FastifyRequest> {
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
   * stage: use it to key by a user that authentication sets.
   */
  hook?: RateLimitHook;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** This route's rate limit: options over the plugin's, or `false` for none. */
    rateLimit?: Partial<FastifyRateLimitOptions> | false;
  }
}

const HOOKS: readonly RateLimitHook[] = ['onRequest', 'preValidation', 'preHandler'];

const fastifyAccess: RequestAccess<FastifyRequest> = {
  ip: (request) => request.ip || undefined,
  socketIp: (request) => request.socket?.remoteAddress,
  header: (request, name) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value[0] : value;
  },
};

const tollgatePlugin: FastifyPluginAsync<TollgatePluginOptions> = async (fastify, options) => {
  const { global = true, hook = 'onRequest', ...base } = options;
  if (typeof global !== 'boolean') throw new TypeError('@tollgate/fastify: global must be true or false');
  if (!HOOKS.includes(hook))
    throw new TypeError(`@tollgate/fastify: hook must be one of ${HOOKS.join(', ')}`);
  // Fastify's logger is off unless the app turns it on; Tollgate's warnings must not vanish with it.
  const logger = typeof fastify.log.level === 'string' ? fastify.log : console;
  // A route's messages name the route: an app has many, and the error may come from any of them.
  const settings = (route?: string) => ({
    adapter: route ? `@tollgate/fastify (route ${route})` : '@tollgate/fastify',
    logger,
    ...(route ? { nameSeed: route } : {}),
  });
  const appLimiter = global ? createHttpLimiter(base, fastifyAccess, settings()) : undefined;
  if (!global) validateInheritedOptions(base, settings());
  const appHook = appLimiter && rateLimitHook(appLimiter, base.handler);
  // Fastify adds a HEAD route for each GET with the same config object: one limiter serves both.
  const routeHooks = new WeakMap<object, ReturnType<typeof rateLimitHook>>();

  function routeHook(own: Partial<FastifyRateLimitOptions>, route: RouteOptions) {
    let check = routeHooks.get(own);
    if (check === undefined) {
      const routeSettings = settings(`${route.method} ${route.url}`);
      const where = `${routeSettings.adapter}: config.rateLimit`;
      const merged = mergeRateLimitOptions(base, own, where) as FastifyRateLimitOptions;
      check = rateLimitHook(createHttpLimiter(merged, fastifyAccess, routeSettings), merged.handler);
      routeHooks.set(own, check);
    }
    return check;
  }

  fastify.addHook('onRoute', (route: RouteOptions) => {
    const own = route.config?.rateLimit;
    if (own === false) return;
    const check = own === undefined ? appHook : routeHook(own, route);
    if (check === undefined) return;
    // onRequest: first, so a limited request costs as little as possible. A later hook is chosen to run
    // after something (authentication, say), so there the check goes last.
    const hooks = toArray(route[hook]);
    route[hook] = (hook === 'onRequest' ? [check, ...hooks] : [...hooks, check]) as never;
  });
};

function rateLimitHook(limiter: HttpLimiter<FastifyRequest>, handler: FastifyRateLimitOptions['handler']) {
  return async function rateLimit(request: FastifyRequest, reply: FastifyReply) {
    const outcome = await limiter.check(request);
    if (outcome.kind === 'skipped') return;
    reply.headers(outcome.headers);
    if (outcome.kind === 'allowed') return;
    if (outcome.kind === 'error') throw outcome.error;
    if (handler) {
      await handler(request, reply, outcome.info);
      return reply;
    }
    const { status, contentType, body } = await limiter.rejection(request, outcome.info);
    // Bytes, not a string: for a string Fastify would add a charset that application/problem+json lacks.
    return reply.code(status).type(contentType).send(Buffer.from(body));
  };
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
 */
export const tollgate = fp(tollgatePlugin, { fastify: '4.x || 5.x', name: '@tollgate/fastify' });

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
