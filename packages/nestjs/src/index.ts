/**
 * `@tollgate/nestjs`: Tollgate as a Nest module (Nest 11 and 12, on Express and on Fastify):
 * `TollgateModule`, `TollgateGuard` for HTTP, GraphQL, WebSocket and microservice handlers,
 * `@RateLimit()` and `@SkipRateLimit()`, and `concurrencyLimit()` as an interceptor.
 *
 * For adapter authors: this package is Nest's code only: its guard, decorators and execution contexts.
 * Each limiter comes from the core's `RouteLimiters` group and runs the core's request lifecycle on the
 * platform under Nest (`platforms.ts`); `docs/writing-an-adapter.md` describes the kit.
 */

export * from '@tollgate/core/app-exports';
export { concurrencyLimit } from './concurrency-limit.js';
export type { NestRpcRequest, NestWsRequest } from './contexts/messages.js';
export { RateLimit, type RouteRateLimitOptions, SkipRateLimit } from './decorators.js';
export { GraphQLRateLimitError } from './graphql-rate-limit-error.js';
export type {
  NestHttpRequest,
  TollgateModuleAsyncOptions,
  TollgateModuleOptions,
  TollgateOptionsFactory,
} from './options.js';
export { RateLimitException } from './rate-limit-exception.js';
export type { RateLimitDetails } from './refusal-details.js';
export { TollgateGuard } from './tollgate-guard.js';
export { TollgateLimiters } from './tollgate-limiters.js';
export { TollgateModule } from './tollgate-module.js';
