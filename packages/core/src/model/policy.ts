/** Policies, the types: what users write, and the numbers the stores use once it is checked. */
import type { Duration } from '../support/duration.js';

/**
 * How a policy counts:
 * - `'token-bucket'` (default): a bucket of `burst` tokens refilled continuously at `limit` per `window`.
 *   Smooth; a full bucket allows a burst, so a client's first window can see up to `limit + burst`.
 * - `'fixed-window'`: at most `limit` per `window`, the window starting at a client's first request (as
 *   express-rate-limit's stores, @fastify/rate-limit and rate-limiter-flexible count).
 * - `'sliding-window'`: the weighted two-window counter (as Cloudflare and Upstash use it): the previous
 *   window's count, weighted by how much of it the sliding window still covers, plus the current one's.
 */
export type AlgorithmName = 'token-bucket' | 'fixed-window' | 'sliding-window';

/**
 * A limit, as people speak it: `{ limit: 100, window: '1m' }` is, by default, a bucket of 100 tokens
 * that refills continuously at 100 tokens per minute; with `algorithm: 'fixed-window'`, at most 100 per
 * minute counted from a client's first request.
 *
 * @example
 * const perSecond: Policy = { limit: 10, window: '1s', name: 'burst' };
 * const perHour: Policy = { limit: 1000, window: '1h', name: 'hourly', algorithm: 'fixed-window' };
 */
export interface Policy {
  /** Tokens per `window` (for the token bucket, added back evenly over it). A positive whole number. */
  limit: number;
  /** The time in which `limit` tokens refill: milliseconds or a string such as `'15s'`, `'2 minutes'`, `'1h'`. */
  window: Duration;
  /**
   * Bucket capacity: the most tokens that can be spent at once after a quiet spell (token bucket only).
   * Default: `limit`. A positive whole number.
   */
  burst?: number;
  /** How the policy counts; see {@link AlgorithmName}. Default: `'token-bucket'`. */
  algorithm?: AlgorithmName;
  /**
   * Names the policy in decisions, headers and storage keys. Letters, digits, `_`, `-`, `.`; at most 64.
   * Default: derived from the numbers, e.g. `'100-per-1m'`. Renaming a policy starts fresh buckets.
   */
  name?: string;
  /**
   * Marks a decision as near the limit (`decision.nearLimit`) once the tokens used, the request's own
   * included, reach this fraction of the capacity (`burst`, which is `limit` unless set): with `limit: 10`
   * and `nearLimit: 0.8`, from a full bucket, requests 8, 9 and 10 are near; 11 is refused, and a refused
   * request is never near. A fraction above 0 and at most 1. Default: none (never near).
   */
  nearLimit?: number;
  /**
   * Token slices, for a key many processes check at once (a tenant-wide quota): each process takes
   * `size` tokens from the store in one call and admits from them in process, until they are spent or
   * `ttl` has passed, then gives back what it did not use. Trades exactness for round trips: in any
   * window, up to `processes × (size − 1)` more or fewer checks than `limit` are admitted (see
   * "One quota for a whole fleet: token slices" in docs/algorithms.md). A limiter with a sliced policy
   * has that one policy only. Default: none (every check asks the store).
   *
   * @example
   * const tenantWide: Policy = { limit: 20_000, window: '1m', algorithm: 'fixed-window', slice: { size: 100 } };
   */
  slice?: TokenSliceOptions;
}

/**
 * The `slice` of a {@link Policy}: how many tokens a process takes from the store at once, and how long
 * it may spend them.
 *
 * @example
 * const slice: TokenSliceOptions = { size: 100, ttl: '2s' };
 */
export interface TokenSliceOptions {
  /**
   * Tokens a process takes from the store in one call. A whole number from 2 up to the policy's
   * capacity (`burst`, which is `limit` unless set). Each process can hold up to `size − 1` tokens
   * that no other process may spend, and a check costing more than `size` asks the store directly.
   */
  size: number;
  /**
   * How long a process may spend a slice, from when it asked for it; then what is left goes back to
   * the store. Milliseconds or a string such as `'500ms'`, at most the policy's `window`. Default:
   * `'1s'`, or the window when it is shorter.
   */
  ttl?: Duration;
}

/**
 * A policy's {@link TokenSliceOptions}, checked.
 *
 * @example
 * resolvePolicies({ limit: 20_000, window: '1m', slice: { size: 100 } })[0].slice; // { size: 100, ttlMs: 1000 }
 */
export interface ResolvedTokenSlice {
  /** Tokens taken at once. */
  readonly size: number;
  /** How long a slice may be spent, in ms: at most the policy's window. */
  readonly ttlMs: number;
}

/**
 * A policy after validation, with everything the stores need precomputed.
 *
 * Bucket levels are kept in *units*: one token is `windowMs` units and each millisecond refills `limit`
 * units. With whole-millisecond clocks and whole costs every number stays an integer, so the Lua and the
 * TypeScript maths agree to the last bit and no rounding can admit an extra request.
 */
export interface ResolvedPolicy {
  /** The policy's name (given or derived). */
  readonly name: string;
  /** How the policy counts. */
  readonly algorithm: AlgorithmName;
  /** Tokens refilled per window. */
  readonly limit: number;
  /** The window in milliseconds. */
  readonly windowMs: number;
  /** Bucket capacity in tokens. */
  readonly capacity: number;
  /** Bucket capacity in units (`capacity * windowMs`). */
  readonly capacityUnits: number;
  /** The policy's `nearLimit` fraction; `undefined`: none. Not part of how buckets are stored. */
  readonly nearLimit?: number | undefined;
  /**
   * Whole tokens used (`capacity - remaining`) from which a decision is near the limit:
   * `ceil(nearLimit × capacity)`; `undefined`: none.
   */
  readonly nearLimitTokens?: number | undefined;
  /** The policy's token slices; `undefined`: none. Not part of how buckets are stored. */
  readonly slice?: ResolvedTokenSlice | undefined;
}
