/** `TollgateModule`: the module's options and the limiters built from them, for every module of the app. */
import { type DynamicModule, Module, type Provider, type Type } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { TollgateOptionError } from '@tollgate/core';
import {
  ADAPTER,
  type NestHttpRequest,
  TOLLGATE_OPTIONS,
  type TollgateModuleAsyncOptions,
  type TollgateModuleOptions,
  type TollgateOptionsFactory,
} from './options.js';
import { TollgateLimiters } from './tollgate-limiters.js';

/**
 * Tollgate for a Nest app. Import it once, in the root module; it is global, so `TollgateGuard`
 * works in every module. Register the guard yourself: app-wide through `APP_GUARD` (after an
 * authentication guard, if keys read the user), or per controller with `@UseGuards(TollgateGuard)`.
 *
 * @example
 * @Module({
 *   imports: [TollgateModule.forRoot({ limit: 100, window: '1m', store: new RedisStore({ client }) })],
 *   providers: [{ provide: APP_GUARD, useClass: TollgateGuard }],
 * })
 * export class AppModule {}
 */
// biome-ignore lint/complexity/noStaticOnlyClass: a Nest module is a class, configured by its static methods.
export class TollgateModule {
  /**
   * The module with `options`: the app-wide limiter and what each `@RateLimit` inherits. Bad options
   * throw a `TollgateOptionError` (a `TypeError`) while the app starts. Default: 100 requests a minute per client IP, in memory.
   *
   * @example
   * TollgateModule.forRoot({ limit: 100, window: '1m', store })
   */
  static forRoot<Req = NestHttpRequest>(options: TollgateModuleOptions<Req> = {}): DynamicModule {
    return tollgateModule([], [{ provide: TOLLGATE_OPTIONS, useValue: options }]);
  }

  /**
   * The module with options made when the app starts: by `useFactory` (given the providers `inject`
   * names), or by the `createTollgateOptions()` of `useClass` (provided here) or `useExisting`
   * (provided elsewhere), from `imports`. Exactly one of the three, else a `TollgateOptionError`.
   *
   * @example
   * TollgateModule.forRootAsync({
   *   imports: [ConfigModule],
   *   inject: [ConfigService],
   *   useFactory: (config: ConfigService) => ({ store: new RedisStore({ client: new Redis(config.get('REDIS_URL')) }) }),
   * })
   */
  static forRootAsync<Req = NestHttpRequest>(options: TollgateModuleAsyncOptions<Req>): DynamicModule {
    const { imports = [], inject = [], useFactory, useClass, useExisting } = options ?? {};
    const given = [useFactory, useClass, useExisting].filter((source) => source !== undefined);
    if (given.length !== 1 || typeof given[0] !== 'function') {
      throw new TollgateOptionError(
        `${ADAPTER}: forRootAsync takes exactly one of useFactory, useClass or useExisting, a function or a class`,
      );
    }
    if (useFactory !== undefined) {
      return tollgateModule(imports, [{ provide: TOLLGATE_OPTIONS, useFactory, inject }]);
    }
    const factory = (useClass ?? useExisting) as Type<TollgateOptionsFactory<Req>>;
    return tollgateModule(imports, [
      ...(useClass === undefined ? [] : [useClass]),
      {
        provide: TOLLGATE_OPTIONS,
        useFactory(made: Partial<TollgateOptionsFactory<Req>>) {
          if (typeof made?.createTollgateOptions !== 'function')
            throw new TollgateOptionError(
              `${ADAPTER}: ${factory.name} has no createTollgateOptions() method`,
            );
          return made.createTollgateOptions();
        },
        inject: [factory],
      },
    ]);
  }
}

// Decorated by a call, not by syntax, as `TollgateGuard` is.
Module({})(TollgateModule);

function tollgateModule(imports: NonNullable<DynamicModule['imports']>, options: Provider[]): DynamicModule {
  return {
    module: TollgateModule,
    global: true,
    imports: [DiscoveryModule, ...imports],
    providers: [
      ...options,
      {
        provide: TollgateLimiters,
        useFactory: (...deps: ConstructorParameters<typeof TollgateLimiters>) =>
          new TollgateLimiters(...deps),
        inject: [TOLLGATE_OPTIONS, Reflector, DiscoveryService, MetadataScanner],
      },
    ],
    exports: [TollgateLimiters],
  };
}
