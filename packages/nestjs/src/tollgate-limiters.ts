/** Every limiter of the app, built once at startup: the module's app-wide one and one per `@RateLimit`. */
import { type ExecutionContext, Logger, type OnModuleInit, type Type } from '@nestjs/common';
import type { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { type HttpLimiter, RouteLimiters, rateLimitLifecycle } from '@tollgate/core/adapter';
import { forGraphQL } from './contexts/graphql.js';
import { RATE_LIMIT, type RateLimitMark } from './decorators.js';
import { ADAPTER, type TollgateModuleOptions } from './options.js';
import { CLIENT_IP_SETTING, type Lifecycle, nestRequests, onEitherPlatform } from './platforms.js';

/** A route's handler, as Nest's `ExecutionContext` gives it. */
type Handler = ReturnType<ExecutionContext['getHandler']>;

/** What the guard runs for one limiter, in each kind of context. */
export interface ContextLimiter {
  /** A controller's HTTP request: the refusal is a `RateLimitException`. */
  readonly http: Lifecycle;
  /** A GraphQL resolver's call with its HTTP response: the refusal is a `GraphQLRateLimitError`. */
  readonly graphql: Lifecycle;
  /** The limiter itself, for calls without an HTTP response: messages, subscriptions. */
  readonly limiter: HttpLimiter<never, unknown>;
}

/**
 * The limiters `TollgateGuard` runs, provided by `TollgateModule` (built by it, from its options and
 * Nest's reflector and discovery). The module's options are checked
 * when it is built, each `@RateLimit` when the app starts (its controllers, resolvers and gateways found
 * by Nest's discovery):
 * bad options stop the app with a `TypeError`. Inject it for its key controls, which reach the
 * app-wide limiter and every route's: `resetKey`, and `setOverride`, `removeOverride`, `getOverride`
 * in those made with `overrides: true`.
 *
 * @example
 * @Inject(TollgateLimiters) private readonly limiters!: TollgateLimiters;
 * await this.limiters.resetKey('ip:203.0.113.7'); // an admin's unblock
 * await this.limiters.setOverride('user:42', 1000, { ttl: '1h' });
 */
export class TollgateLimiters extends RouteLimiters<never, unknown, ContextLimiter> implements OnModuleInit {
  constructor(
    options: TollgateModuleOptions<never>,
    private readonly reflector: Reflector,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {
    super(options ?? {}, {
      adapter: ADAPTER,
      access: nestRequests,
      clientIpSetting: CLIENT_IP_SETTING,
      logger: new Logger('Tollgate'),
      routeOptionsName: '@RateLimit options',
      notHere: { handler: 'handler is no option here; answer a RateLimitException in an exception filter' },
      make(limiterOptions, build) {
        const limiter = build(limiterOptions);
        return {
          http: onEitherPlatform((access) => rateLimitLifecycle(limiter, access)),
          graphql: onEitherPlatform((access) => rateLimitLifecycle(limiter, forGraphQL(access))),
          limiter,
        };
      },
    });
  }

  /**
   * Builds the limiter of every `@RateLimit` on a controller (HTTP routes, microservice handlers), a
   * resolver or a gateway, or on one of their handlers.
   */
  onModuleInit(): void {
    for (const { metatype } of this.discovery.getControllers()) {
      if (typeof metatype === 'function') this.#buildAll(metatype.prototype, metatype as Type);
    }
    // Resolvers and gateways are providers. A request-scoped one has no instance yet: its limiters are
    // built when its first call comes.
    for (const { instance } of this.discovery.getProviders()) {
      if (typeof instance !== 'object' || instance === null) continue;
      const prototype: unknown = Object.getPrototypeOf(instance);
      const type = (instance as { constructor?: unknown }).constructor;
      if (typeof type === 'function' && prototype !== null) this.#buildAll(prototype, type as Type);
    }
  }

  /** Builds the limiters of `type`'s `@RateLimit`s: its own and its methods'. */
  #buildAll(prototype: unknown, type: Type): void {
    if (typeof prototype !== 'object' || prototype === null) return;
    const methods = prototype as Record<string, Handler>;
    const marked = this.reflector.get<RateLimitMark | undefined>(RATE_LIMIT, type) !== undefined;
    for (const method of this.scanner.getAllMethodNames(methods)) {
      const handler = methods[method] as Handler;
      if (marked || this.reflector.get(RATE_LIMIT, handler) !== undefined) this.forRoute(handler, type);
    }
  }

  /**
   * The limiter of a handler: its own `@RateLimit`, else its class's (a controller, a resolver, a
   * gateway), else the app-wide limiter; `undefined` under `@SkipRateLimit()`.
   */
  forRoute(handler: Handler, controller: Type): ContextLimiter | undefined {
    const own = this.reflector.get<RateLimitMark | undefined>(RATE_LIMIT, handler);
    const mark = own ?? this.reflector.get<RateLimitMark | undefined>(RATE_LIMIT, controller);
    if (mark === undefined) return this.appWide;
    if (mark === false) return undefined;
    const where = own === undefined ? controller.name : `${controller.name}.${handler.name}`;
    // One limiter per decorator, even where two decorators were given one options object.
    return this.ofRoute(mark.options, where, { key: mark });
  }
}
