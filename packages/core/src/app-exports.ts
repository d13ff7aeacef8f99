/**
 * What every adapter re-exports beside its middleware, so an app imports all it needs from its
 * framework's package: the key functions, the stores, the errors it catches, and the types its options
 * name. One list, kept here, so that no adapter offers an app more or less than another.
 */
export type {
  ConcurrencyLimitOptions,
  HeaderProfile,
  KeyFunction,
  Policy,
  RateLimitInfo,
  Store,
  TollgateErrorCode,
} from './index.js';
export {
  byApiKey,
  byIp,
  byUser,
  ClientAddressError,
  firstOf,
  MemoryStore,
  RateLimitError,
  RedisStore,
  TollgateError,
} from './index.js';
