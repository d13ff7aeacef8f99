/** `@tollgate/core`: rate limiting exact under concurrency, in memory or on Redis. */
export type { AlgorithmName } from './algorithms/registry.js';
export {
  type ConcurrencyLimiter,
  type ConcurrencyLimiterOptions,
  createConcurrencyLimiter,
  type Lease,
  type LeaseDecision,
} from './concurrency-limiter.js';
export type { Decision, DecisionReason, PolicyDecision } from './decision.js';
export {
  BREAKER_CLOSE_CHANNEL,
  BREAKER_OPEN_CHANNEL,
  type BreakerCloseEvent,
  type BreakerOpenEvent,
  DECISION_CHANNEL,
  DENY_CACHE_HIT_CHANNEL,
  type DecisionEvent,
  type DecisionOutcome,
  type DenyCacheHitEvent,
  STORE_ERROR_CHANNEL,
  type StoreErrorEvent,
  subscribeTollgate,
  type TollgateChannel,
  type TollgateEvents,
} from './diagnostics/channels.js';
export { type Duration, type DurationUnit, parseDuration } from './duration.js';
export type { AllowList } from './http/allow-list.js';
export type { RateLimitCallback } from './http/callbacks.js';
export { ClientAddressError } from './http/client-address-error.js';
export { ipIdentity } from './http/client-ip.js';
export type { AllowedAnswerHeader, HeaderSwitches, LimitedAnswerHeader } from './http/header-switches.js';
export {
  type EarlierHeaders,
  type HeaderProfile,
  type ProfiledHeaders,
  type StackedHeaders,
  stackHeaders,
} from './http/headers.js';
export {
  type ConcurrencyLimitOptions,
  createHttpConcurrencyLimiter,
  type HttpConcurrencyLimiter,
} from './http/http-concurrency.js';
export { createHttpLimiter, type HttpLimiter } from './http/http-limiter.js';
export {
  type CheckingLimiter,
  concurrencyLifecycle,
  type Handled,
  type LeasingLimiter,
  type ResponseAccess,
  rateLimitLifecycle,
} from './http/lifecycle.js';
export type {
  AdapterSettings,
  LimitedMessage,
  PerRequest,
  RateLimitOptions,
} from './http/options.js';
export type {
  ConcurrencyOutcome,
  NodeResponse,
  RateLimitInfo,
  RateLimitOutcome,
  RateLimitRejection,
} from './http/outcome.js';
export {
  COST_EXCEEDS_CAPACITY_TYPE,
  type CostExceedsCapacityProblem,
  costExceedsCapacityProblem,
  PROBLEM_JSON,
  problemDetails,
  QUOTA_EXCEEDED_TYPE,
  type QuotaExceededProblem,
  quotaExceededProblem,
} from './http/problem.js';
export { RateLimitError } from './http/rate-limit-error.js';
export {
  type ByApiKeyOptions,
  type ByIpOptions,
  byApiKey,
  byIp,
  byUser,
  firstOf,
  type KeyFunction,
  type RequestAccess,
  type VerifyApiKey,
} from './http/request-keys.js';
export type { SuccessTest } from './http/response-counting.js';
export { mergeRateLimitOptions, validateInheritedOptions } from './http/route-options.js';
export type { Logger, WarningCode, WarningSwitches } from './http/warnings.js';
export { type HashIdentityOptions, hashIdentity } from './identity.js';
export type { InsuranceOptions } from './insurance.js';
export {
  type BanOptions,
  type ConsumeOptions,
  createLimiter,
  type Limiter,
  type LimiterOptions,
  type OnStoreError,
  type RefundOptions,
  type StoreErrorAction,
} from './limiter.js';
export type { Policy, ResolvedPolicy } from './policy.js';
export type { BucketMode, BucketRequest, BucketResult, LeaseRequest, LeaseResult, Store } from './store.js';
export { StoreUnavailableError } from './store-error.js';
export { MemoryStore, type MemoryStoreOptions } from './stores/memory/memory-store.js';
export type {
  IoRedisClientLike,
  NodeRedisClientLike,
  NodeRedisClusterLike,
  RedisClientLike,
} from './stores/redis/redis-client.js';
export { RedisStore } from './stores/redis/redis-store.js';
export type { RedisStoreOptions } from './stores/redis/redis-store-options.js';
