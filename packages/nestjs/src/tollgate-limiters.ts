/** Every limiter of the app, built once at startup: the module's app-wide one and one per `@RateLimit`. */
import { type ExecutionContext, Logger, type OnModuleInit, type Type } from '@nestjs/common';
import type { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { RouteLimiters, rateLimitLifecycle } from '@tollgate/core';
import { RATE_LIMIT, type RateLimitMark } from './decorators.js';
import { ADAPTER, type TollgateModuleOptions } from './options.js';
import { CLIENT_IP_SETTING, type Lifecycle, nestRequests, onEitherPlatform } from './platforms.js';

/** A route's handler, as Nest's `ExecutionContext` gives it. */
type Handler = ReturnType<ExecutionContext['getHandler']>;

/**
 * The limiters `TollgateGuard` runs, provided by `TollgateModule` (built by it, from its options and
 * Nest's reflector and discovery). The module's options are checked
 * when it is built, each `@RateLimit` when the app starts (its controllers found by Nest's discovery):
 * bad options stop the app with a `TypeError`. Inject it for its key controls, which reach the
 * app-wide limiter and every route's: `resetKey`, and `setOverride`, `removeOverride`, `getOverride`
 * in those made with `overrides: true`.
 *
 * @example
 * @Inject(TollgateLimiters) private readonly limiters!: TollgateLimiters;
 * await this.limiters.resetKey('ip:203.0.113.7'); // an admin's unblock
 * await this.limiters.setOverride('user:42', 1000, { ttl: '1h' });
 */
export class TollgateLimiters extends RouteLimiters<never, unknown, Lifecycle> implements OnModuleInit {
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
        return onEitherPlatform((access) => rateLimitLifecycle(limiter, access));
      },
    });
  }

  /** Builds the limiter of every `@RateLimit` on a controller or a handler. */
  onModuleInit(): void {
    for (const { metatype } of this.discovery.getControllers()) {
      if (typeof metatype !== 'function') continue;
      const prototype = metatype.prototype as Record<string, Handler>;
      for (const method of this.scanner.getAllMethodNames(prototype))
        this.forRoute(prototype[method] as Handler, metatype as Type);
    }
  }

  /**
   * The lifecycle of a route: its handler's `@RateLimit`, else its controller's, else the app-wide
   * limiter; `undefined` under `@SkipRateLimit()`.
   */
  forRoute(handler: Handler, controller: Type): Lifecycle | undefined {
    const own = this.reflector.get<RateLimitMark | undefined>(RATE_LIMIT, handler);
    const mark = own ?? this.reflector.get<RateLimitMark | undefined>(RATE_LIMIT, controller);
    if (mark === undefined) return this.appWide;
    if (mark === false) return undefined;
    const where = own === undefined ? controller.name : `${controller.name}.${handler.name}`;
    // One limiter per decorator, even where two decorators were given one options object.
    return this.ofRoute(mark.options, where, { key: mark });
  }
}
