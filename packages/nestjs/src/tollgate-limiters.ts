/** Every limiter of the app, built once at startup: the module's app-wide one and one per `@RateLimit`. */
import { type ExecutionContext, Logger, type OnModuleInit, type Type } from '@nestjs/common';
import type { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import {
  type CheckingLimiter,
  createHttpLimiter,
  groupKeyControls,
  type HttpLimiter,
  type LimitOverride,
  mergeRateLimitOptions,
  type Override,
  type OverrideOptions,
  rateLimitLifecycle,
} from '@tollgate/core';
import { RATE_LIMIT, type RateLimitMark } from './decorators.js';
import { ADAPTER, type TollgateModuleOptions } from './options.js';
import { type Lifecycle, nestRequests, onEitherPlatform, type Refusal } from './platforms.js';

type Options = TollgateModuleOptions<never>;

/** A route's handler, as Nest's `ExecutionContext` gives it. */
type Handler = ReturnType<ExecutionContext['getHandler']>;

/** Where warnings go unless the options name a logger: Nest's own logging. */
const logger = new Logger('Tollgate');

/**
 * The limiters `TollgateGuard` runs, provided by `TollgateModule` (built by it, from its options and
 * Nest's reflector and discovery). The module's options are checked
 * when it is built, each `@RateLimit` when the app starts (its controllers found by Nest's discovery):
 * bad options stop the app with a `TypeError`. Inject it for {@link TollgateLimiters.resetKey}.
 *
 * @example
 * @Inject(TollgateLimiters) private readonly limiters!: TollgateLimiters;
 * await this.limiters.resetKey('ip:203.0.113.7'); // an admin's unblock
 */
export class TollgateLimiters implements OnModuleInit {
  readonly #base: Options;
  readonly #appWide: Lifecycle;
  readonly #ofMark = new WeakMap<object, Lifecycle>();
  readonly #built: HttpLimiter<never>[] = [];

  constructor(
    options: Options,
    private readonly reflector: Reflector,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {
    this.#base = options ?? {};
    this.#appWide = this.#build(this.#base, ADAPTER);
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
    if (mark === undefined) return this.#appWide;
    if (mark === false) return undefined;
    let lifecycle = this.#ofMark.get(mark);
    if (lifecycle === undefined) {
      const where = own === undefined ? controller.name : `${controller.name}.${handler.name}`;
      const adapter = `${ADAPTER} (${where})`;
      const merged = mergeRateLimitOptions(this.#base, mark.options, `${adapter}: @RateLimit options`);
      lifecycle = this.#build(merged as Options, adapter, where);
      this.#ofMark.set(mark, lifecycle);
    }
    return lifecycle;
  }

  readonly #controls = groupKeyControls(() => this.#built, ADAPTER);

  /** Refills every bucket of `key` (`'ip:203.0.113.7'`, as `req.rateLimit.key` shows it) in every limiter. */
  resetKey(key: string): Promise<void> {
    return this.#controls.resetKey(key);
  }

  /**
   * Gives `key` other limits in every limiter made with `overrides: true` (the app-wide one, and each
   * route's, which is made when the app starts), in every process from its next check: see
   * `KeyControls.setOverride`.
   *
   * @example
   * await this.limiters.setOverride('user:42', 1000, { ttl: '1h' });
   */
  setOverride(key: string, limits: LimitOverride, options?: OverrideOptions): Promise<void> {
    return this.#controls.setOverride(key, limits, options);
  }

  /** Gives `key` the policies' own limits again, in every limiter made with `overrides: true`. */
  removeOverride(key: string): Promise<void> {
    return this.#controls.removeOverride(key);
  }

  /** `key`'s override in force, as the first limiter made with `overrides: true` reads it. */
  getOverride(key: string): Promise<Override | undefined> {
    return this.#controls.getOverride(key);
  }

  #build(options: Options, adapter: string, where?: string): Lifecycle {
    const limiter = createHttpLimiter<never>(options, nestRequests, {
      adapter,
      logger,
      ...(where === undefined ? {} : { nameSeed: where }),
    });
    if (limiter.handler !== undefined)
      throw new TypeError(
        `${adapter}: handler is no option here; answer a RateLimitException in an exception filter`,
      );
    this.#built.push(limiter);
    // The refused request's info travels with its answer, to the RateLimitException.
    const checking: CheckingLimiter<never, unknown> = {
      requestPropertyName: limiter.requestPropertyName,
      handler: undefined,
      check: (request) => limiter.check(request),
      rejection: async (request, info): Promise<Refusal> => ({
        ...(await limiter.rejection(request, info)),
        info,
      }),
      countByResponse: (info, request, response, raw) =>
        limiter.countByResponse(info, request, response, raw),
    };
    return onEitherPlatform((access) => rateLimitLifecycle(checking, access));
  }
}
