/** The module's options: the shared Tollgate options, given at once or built by a factory with injected providers. */
import type { FactoryProvider, ModuleMetadata, Type } from '@nestjs/common';
import type { RateLimitOptions } from '@tollgate/core';

/**
 * What Tollgate reads of the request Nest hands a guard: Express's `req` or Fastify's `request`. Key
 * functions and callbacks are given that request; name your platform's type to read more of it
 * (`key: (req: Request) => req.user?.id`).
 */
export interface NestHttpRequest {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The client IP as the platform resolved it, under its trust proxy setting. */
  readonly ip?: string | undefined;
}

/**
 * Options of {@link TollgateModule.forRoot}: the app-wide limiter, which every guarded route without a
 * `@RateLimit` of its own uses, and the options each `@RateLimit` inherits (`store`, `key`, …). They are
 * Tollgate's shared `RateLimitOptions` without `handler`: a refusal is a `RateLimitException`, which
 * exception filters answer. Without options, each client IP may send 100 requests a minute.
 *
 * @example
 * const options: TollgateModuleOptions = { limit: 100, window: '1m', store: new RedisStore({ client }) };
 */
export type TollgateModuleOptions<Req = NestHttpRequest> = Omit<RateLimitOptions<Req>, 'handler'>;

/**
 * A class that makes the module's options, for {@link TollgateModule.forRootAsync}'s `useClass` or
 * `useExisting`: Nest injects its constructor's dependencies.
 *
 * @example
 * class TollgateConfig implements TollgateOptionsFactory {
 *   createTollgateOptions(): TollgateModuleOptions {
 *     return { limit: 100, window: '1m' };
 *   }
 * }
 */
export interface TollgateOptionsFactory<Req = NestHttpRequest> {
  createTollgateOptions(): TollgateModuleOptions<Req> | Promise<TollgateModuleOptions<Req>>;
}

/**
 * Options of {@link TollgateModule.forRootAsync}: where the module's options come from — exactly one of
 * `useFactory` (given the providers `inject` names), `useClass` (a {@link TollgateOptionsFactory} the
 * module provides) or `useExisting` (one provided elsewhere) — and the modules that export what they
 * need (`imports`).
 *
 * @example
 * const options: TollgateModuleAsyncOptions = {
 *   imports: [ConfigModule],
 *   inject: [ConfigService],
 *   useFactory: (config: ConfigService) => ({ store: new RedisStore({ client: new Redis(config.get('REDIS_URL')) }) }),
 * };
 */
export interface TollgateModuleAsyncOptions<Req = NestHttpRequest> {
  imports?: ModuleMetadata['imports'];
  /** The providers `useFactory` is given, in order. */
  inject?: FactoryProvider['inject'];
  useFactory?: (...args: never[]) => TollgateModuleOptions<Req> | Promise<TollgateModuleOptions<Req>>;
  /** A class the module provides, whose `createTollgateOptions()` makes the options. */
  useClass?: Type<TollgateOptionsFactory<Req>>;
  /** A provider of the app (from `imports`), whose `createTollgateOptions()` makes the options. */
  useExisting?: Type<TollgateOptionsFactory<Req>>;
}

/** The injection token of the module's options. */
export const TOLLGATE_OPTIONS = Symbol('TollgateModuleOptions');

/** Starts every message of this package's limiters. */
export const ADAPTER = '@tollgate/nestjs';
