/** `@tollgate/core`: token-bucket rate limiting, exact under concurrency, in memory or on Redis. */
export type { Decision, DecisionReason, PolicyDecision } from './decision.js';
export { type Duration, type DurationUnit, formatDuration, parseDuration } from './duration.js';
export { boundIdentity, hashIdentity, MAX_IDENTITY_LENGTH } from './identity.js';
export { type ConsumeOptions, createLimiter, type Limiter, type LimiterOptions } from './limiter.js';
export { MemoryStore, type MemoryStoreOptions } from './memory-store.js';
export { type Policy, type ResolvedPolicy, resolvePolicies } from './policy.js';
export { type RedisClientLike, RedisStore, type RedisStoreOptions } from './redis-store.js';
export type { BucketMode, BucketRequest, BucketResult, Store } from './store.js';
