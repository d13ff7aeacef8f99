/**
 * `@tollgate/graphql`: cost-based rate limiting for GraphQL servers. An operation's cost is estimated
 * from its document and variables and reserved before it runs, and its actual cost settled after, on
 * Tollgate's limiters (in memory or on Redis).
 */

/** The stores and the error family, so an app imports what its limit needs from this package. */
export {
  type HeaderProfile,
  MemoryStore,
  type Policy,
  RedisStore,
  type Store,
  TollgateError,
} from '@tollgate/core';
export type { OperationToCost } from './cost/operation.js';
export { costDirectives } from './cost/schema-costs.js';
export { estimateCost } from './estimate-cost.js';
export type { CostExtension, ThrottleStatus } from './limit/cost-limit.js';
export { type CostLimitCode, CostLimitError } from './limit/cost-limit-error.js';
export type { CostLimitOptions, CostOptions, KeyOfContext, Logger } from './options.js';
export {
  type ApolloCostLimitPlugin,
  type ApolloRequestContext,
  apolloCostLimit,
} from './servers/apollo.js';
export {
  type EnvelopCostLimitPlugin,
  type EnvelopExecuteDonePayload,
  type EnvelopExecutePayload,
  useCostLimit,
} from './servers/envelop.js';
export {
  type MercuriusAppLike,
  type MercuriusContextLike,
  mercuriusCostLimit,
} from './servers/mercurius.js';
