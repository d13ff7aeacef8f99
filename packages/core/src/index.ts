/** `@tollgate/core`: rate limiting exact under concurrency, in memory or on Redis. */

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
export type { RateLimitCallback } from './http/answer/callbacks.js';
export type {
  AllowedAnswerHeader,
  HeaderSwitches,
  LimitedAnswerHeader,
} from './http/answer/header-switches.js';
export {
  type HeaderProfile,
  retryAfterSeconds,
} from './http/answer/headers.js';
export type { RateLimitInfo, RateLimitRejection } from './http/answer/outcome.js';
export {
  COST_EXCEEDS_CAPACITY_TYPE,
  type CostExceedsCapacityProblem,
  costExceedsCapacityProblem,
  PROBLEM_JSON,
  problemDetails,
  QUOTA_EXCEEDED_TYPE,
  type QuotaExceededProblem,
  quotaExceededProblem,
  refusalStatus,
} from './http/answer/problem.js';
export { RateLimitError } from './http/answer/rate-limit-error.js';
export type { AllowList } from './http/identity/allow-list.js';
export { ClientAddressError } from './http/identity/client-address-error.js';
export { ipIdentity } from './http/identity/client-ip.js';
export {
  type ByApiKeyOptions,
  type ByIpOptions,
  byApiKey,
  byIp,
  byUser,
  firstOf,
  type KeyFunction,
  type VerifyApiKey,
} from './http/identity/request-keys.js';
export type {
  ConcurrencyLimitOptions,
  DelayOptions,
  LimitedMessage,
  MeteredCost,
  PerRequest,
  RateLimitOptions,
  SuccessTest,
} from './http/options/option-types.js';
export type { KeyControls } from './http/pipeline/key-controls.js';
export {
  type ConcurrencyLimiter,
  type ConcurrencyLimiterOptions,
  createConcurrencyLimiter,
  type Lease,
  type LeaseDecision,
} from './limiter/concurrency-limiter.js';
export {
  type ConsumeOptions,
  createLimiter,
  type Limiter,
  type RefundOptions,
  type ReserveOptions,
  type ScheduleOptions,
} from './limiter/limiter.js';
export type {
  BanOptions,
  InsuranceOptions,
  LimiterOptions,
  OnStoreError,
  StoreErrorAction,
} from './limiter/limiter-options.js';
export type { LimitOverride, Override, OverrideOptions, PolicyOverride } from './limiter/overrides.js';
export type { Reservation } from './limiter/reservation.js';
export type { SettleResult } from './limiter/reservation-ids.js';
export { TurnRefusedError } from './limiter/turn-refused-error.js';
export type { Sleep } from './limiter/waits.js';
export type { Decision, DecisionReason, PolicyDecision } from './model/decision.js';
export type {
  AlgorithmName,
  Policy,
  ResolvedPolicy,
  ResolvedTokenSlice,
  TokenSliceOptions,
} from './model/policy.js';
export type {
  BucketMode,
  BucketRequest,
  BucketResult,
  LeaseRequest,
  LeaseResult,
  OverrideRequest,
  OverrideResult,
  ReservationOutcome,
  ReservationRequest,
  ReservationResult,
  Store,
} from './model/store.js';
export { MemoryStore, type MemoryStoreOptions } from './stores/memory/memory-store.js';
export type {
  GlideClientLike,
  GlideClusterClientLike,
  IoRedisClientLike,
  NodeRedisClientLike,
  NodeRedisClusterLike,
  RedisClientLike,
} from './stores/redis/redis-client.js';
export { RedisStore } from './stores/redis/redis-store.js';
export type { RedisStoreOptions } from './stores/redis/redis-store-options.js';
export { type Duration, type DurationUnit, parseDuration } from './support/duration.js';
export { type HashIdentityOptions, hashIdentity } from './support/identity.js';
export { TollgateOptionError } from './support/option-error.js';
export { StoreUnavailableError } from './support/store-error.js';
export { TollgateError, type TollgateErrorCode } from './support/tollgate-error.js';
export type { Logger, WarningCode, WarningSwitches } from './support/warnings.js';
