/**
 * The limiters of an adapter whose app gives options once and whose routes give their own over them
 * (Fastify's plugin and `config.rateLimit`, NestJS's module and `@RateLimit`): the app-wide one, one per
 * route's options, and their key controls together.
 */

import type { Logger } from '../../support/warnings.js';
import type { RequestAccess } from '../identity/request-keys.js';
import type { AdapterSettings, RateLimitOptions } from '../options/option-types.js';
import { mergeRateLimitOptions, validateInheritedOptions } from '../options/route-options.js';
import { createHttpLimiter, type HttpLimiter } from './http-limiter.js';
import { groupKeyControls, type KeyControls } from './key-controls.js';

/** Options of a limiter, as the app and its routes give them; an adapter may read some itself. */
type Options<Req, Res> = Partial<RateLimitOptions<Req, Res>>;

/** How {@link RouteLimiters} builds what the adapter runs per limiter. */
export interface RouteLimiterSettings<Req, Res, Made> {
  /** The adapter's package, which starts every message: `'@tollgate/fastify'`. */
  readonly adapter: string;
  readonly access: RequestAccess<Req>;
  /** Where warnings go unless the options name a logger. */
  readonly logger?: Logger;
  /** `false`: no app-wide limiter, the base options only inherited by routes (checked all the same). Default: `true`. */
  readonly appWide?: boolean;
  /** Shared options the adapter has no use for, with the message that refuses each (see `AdapterSettings`). */
  readonly notHere?: AdapterSettings['notHere'];
  /** What the adapter's users call its client-IP setting, for the warnings (see `AdapterSettings`). */
  readonly clientIpSetting?: AdapterSettings['clientIpSetting'];
  /** What a route's own options are called in errors: `'config.rateLimit'`, `'@RateLimit options'`. */
  readonly routeOptionsName: string;
  /** Whether a limiter made now is made while a request is handled (warned about). Default: never. */
  readonly inRequestHandler?: () => boolean;
  /**
   * What the adapter runs for one limiter (its hook, its lifecycle): from the merged options, of which
   * it may take those that are its own (Fastify's `hook`) before it builds the limiter with the rest.
   * `where` is the route's, `undefined` for the app-wide limiter.
   */
  make(
    options: Options<Req, Res>,
    build: (options: Options<Req, Res>) => HttpLimiter<Req, Res>,
    where: string | undefined,
  ): Made;
}

/**
 * An adapter's limiters for an app and its routes. The base options are checked at once; a route's
 * limiter is made the first time its options object is asked for (one object, one limiter: Fastify's
 * HEAD route shares its GET's), from the route's options merged over the base
 * (`mergeRateLimitOptions`), and named by where it is, in its messages and its default name. Its
 * {@link KeyControls} reach every limiter made so far.
 *
 * @example
 * const limiters = new RouteLimiters(base, { adapter, access, routeOptionsName: 'config.rateLimit', make });
 * const made = own === undefined ? limiters.appWide : limiters.ofRoute(own, `route GET /search`);
 */
export class RouteLimiters<Req, Res, Made> implements KeyControls {
  /** What the app-wide limiter runs; `undefined` with `appWide: false`. */
  readonly appWide: Made | undefined;
  readonly #base: Options<Req, Res>;
  readonly #settings: RouteLimiterSettings<Req, Res, Made>;
  readonly #ofRoute = new WeakMap<object, Made>();
  readonly #built: HttpLimiter<Req, Res>[] = [];
  /** {@inheritDoc KeyControls.resetKey} */
  readonly resetKey: KeyControls['resetKey'];
  /** {@inheritDoc KeyControls.setOverride} */
  readonly setOverride: KeyControls['setOverride'];
  /** {@inheritDoc KeyControls.removeOverride} */
  readonly removeOverride: KeyControls['removeOverride'];
  /** {@inheritDoc KeyControls.getOverride} */
  readonly getOverride: KeyControls['getOverride'];

  constructor(base: Options<Req, Res>, settings: RouteLimiterSettings<Req, Res, Made>) {
    this.#base = base;
    this.#settings = settings;
    // Functions of their own, not methods: an adapter hands them out apart from this object.
    const controls = groupKeyControls(() => this.#built, settings.adapter);
    this.resetKey = controls.resetKey;
    this.setOverride = controls.setOverride;
    this.removeOverride = controls.removeOverride;
    this.getOverride = controls.getOverride;
    const { adapter, logger, notHere } = settings;
    if (settings.appWide === false)
      validateInheritedOptions(base, {
        adapter,
        ...(logger ? { logger } : {}),
        ...(notHere ? { notHere } : {}),
      });
    this.appWide = settings.appWide === false ? undefined : this.#make(base, undefined);
  }

  /**
   * What the limiter of a route's options `own` runs, made the first time `own` (or `made.key`, one
   * object per decorator where two may give the same options) is asked for; `where` names the route.
   * `made.inRequestHandler` overrides the settings' (a route Fastify's plugin never saw is made lazily,
   * and rightly).
   */
  ofRoute(
    own: Options<Req, Res>,
    where: string,
    made: { readonly key?: object; readonly inRequestHandler?: boolean } = {},
  ): Made {
    const key = made.key ?? own;
    let found = this.#ofRoute.get(key);
    if (found === undefined) {
      const what = `${this.#settings.adapter} (${where}): ${this.#settings.routeOptionsName}`;
      const merged = mergeRateLimitOptions(this.#base, own, what) as Options<Req, Res>;
      found = this.#make(merged, where, made.inRequestHandler);
      this.#ofRoute.set(key, found);
    }
    return found;
  }

  /**
   * A limiter of `own` over the base options that is none of these limiters: made anew on each call,
   * and out of reach of their key controls (`fastify.rateLimit(own)`). `what` names `own` in errors.
   */
  apart(own: Options<Req, Res>, where: string, what: string): Made {
    const merged = mergeRateLimitOptions(this.#base, own, what) as Options<Req, Res>;
    return this.#make(merged, where, undefined, false);
  }

  #make(
    options: Options<Req, Res>,
    where: string | undefined,
    inRequestHandler?: boolean,
    grouped = true,
  ): Made {
    const { adapter, access, logger, notHere, clientIpSetting, make } = this.#settings;
    return make(
      options,
      (limiterOptions) => {
        const limiter = createHttpLimiter<Req, Res>(limiterOptions, access, {
          adapter: where === undefined ? adapter : `${adapter} (${where})`,
          ...(logger ? { logger } : {}),
          ...(notHere ? { notHere } : {}),
          ...(clientIpSetting ? { clientIpSetting } : {}),
          inRequestHandler: inRequestHandler ?? this.#settings.inRequestHandler?.() ?? false,
          ...(where === undefined ? {} : { nameSeed: where }),
        });
        if (grouped) this.#built.push(limiter);
        return limiter;
      },
      where,
    );
  }
}
