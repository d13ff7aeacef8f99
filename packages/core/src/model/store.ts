/** The contract between a limiter and the place its buckets live. */
import type { BanRule } from './ban.js';
import type { Decision } from './decision.js';
import type { ResolvedPolicy } from './policy.js';

/**
 * What a store is asked to do with all of a key's buckets at once.
 * - `consume`: charge `cost` to every bucket if all have it, else charge none.
 * - `peek`: answer as `consume` would, charging nothing.
 * - `refund`: give `cost` back to every bucket, never beyond capacity, nor beyond what the charge being
 *   undone still holds (see {@link BucketRequest.chargedAtMs}).
 * - `penalty`: charge `cost` to every bucket whether it has it or not (a client can owe).
 */
export type BucketMode = 'consume' | 'peek' | 'refund' | 'penalty';

/** One atomic operation on the buckets of one key, one bucket per policy. */
export interface BucketRequest {
  /**
   * The bucket owner: a limiter namespace and an identity joined so that no two pairs give one key,
   * bounded in length, and free of `{` and `}` (see `bucketOwner`).
   */
  readonly key: string;
  /** The policies, in the order results are returned. Stable per limiter, so stores may cache by it. */
  readonly policies: readonly ResolvedPolicy[];
  /** Tokens to charge or give back; a positive finite number. */
  readonly cost: number;
  /** What to do. */
  readonly mode: BucketMode;
  /**
   * For a `refund`: when the tokens given back were charged, in ms by the store's clock (a decision's
   * `decidedAtMs`). Each bucket then gives back no more than that charge still holds: nothing in a
   * window that began after it, and in a token bucket the cost less what has refilled since. Absent:
   * the whole cost (a reward).
   */
  readonly chargedAtMs?: number | undefined;
  /**
   * For a `consume`: how long the caller will wait for its turn, in ms. Above 0, a cost that does not
   * fit now is still charged if every policy can cover it within this long, going into debt (token
   * buckets only: a policy that cannot owe refuses it); the caller's turn is when the debt is repaid.
   * Absent or 0: only a cost that fits now is charged.
   */
  readonly maxWaitMs?: number | undefined;
  /**
   * The limiter's ban, if it has one: `after` refusals in a row ban the client for `durationMs`; and its
   * `exponentialBackoff` and `continueExceeding`, decided with the policies (see `BanRule`). Stable
   * per limiter, like `policies`.
   */
  readonly ban?: BanRule | undefined;
  /**
   * Whether the key's override, if one is in force (see {@link Store.override}), replaces the policies'
   * limits. Stable per limiter, like `policies`. Default: `false`.
   */
  readonly overrides?: boolean | undefined;
  /**
   * How long the caller waits for an answer, in ms. A store that can be slow gives up after this long
   * (rejecting with `StoreUnavailableError`) and makes sure an operation it gave up on is not applied
   * later. `undefined`: wait as long as it takes.
   */
  readonly timeoutMs?: number | undefined;
}

/** What the store decided, in the units of {@link ResolvedPolicy}. */
export interface BucketResult {
  /**
   * `consume`: every policy had `cost` and was charged. `peek`: it would have been. `refund`, `penalty`:
   * true.
   */
  readonly applied: boolean;
  /** The store's clock when it decided, in ms since the epoch (the Redis server's, for `RedisStore`). */
  readonly nowMs: number;
  /**
   * Each policy's state after the operation, brought to `nowMs`, in policy order: numbers whose meaning
   * is the policy's algorithm's (a token bucket's is `[levelUnits, atMs]`).
   */
  readonly states: readonly (readonly number[])[];
  /** With a ban: when the client's ban ends, in ms by the store's clock; 0 or absent when not banned. */
  readonly bannedUntilMs?: number;
  /**
   * With `exponentialBackoff`: until when the client is held back by its refusals in a row, in ms by the
   * store's clock; 0 or absent when it is not.
   */
  readonly backoffUntilMs?: number;
  /**
   * With `overrides`: the policies the store decided by when an override was in force (the request's,
   * with the override's limits, in the same order; `states` are in their terms); absent when none was.
   */
  readonly policies?: readonly ResolvedPolicy[];
}

/**
 * One operation on a key's override: limits that replace its policies' for a while, read by every check
 * that asks for overrides, in the same store step as the check.
 */
export interface OverrideRequest {
  /** The key's owner, encoded as for {@link BucketRequest.key}. */
  readonly key: string;
  /** The limiter's own policies and ban, which name the key's buckets (as for {@link BucketRequest}). */
  readonly policies: readonly ResolvedPolicy[];
  readonly ban?: BanRule | undefined;
  /** Write an override, remove it, or read it. */
  readonly mode: 'set' | 'remove' | 'get';
  /** `set`: the policies with the override's limits, in the order of `policies`. */
  readonly override?: readonly ResolvedPolicy[];
  /** `set`: how long the override lasts, in ms; `undefined`: until it is removed. */
  readonly ttlMs?: number | undefined;
  /** As for {@link BucketRequest.timeoutMs}. */
  readonly timeoutMs?: number | undefined;
}

/** The override a key has (after a `set`, the one written); `undefined` for none. */
export interface OverrideResult {
  /** The policies with the override's limits, in the order of the request's. */
  readonly policies: readonly ResolvedPolicy[];
  /** When it ends, in ms by the store's clock; `undefined`: when it is removed. */
  readonly expiresAtMs: number | undefined;
}

/** One lease operation on a key (see `createConcurrencyLimiter`). */
export interface LeaseRequest {
  /** The key's owner, encoded as for {@link BucketRequest.key}. */
  readonly key: string;
  /** Take a lease if fewer than `limit` are held, or end one. */
  readonly mode: 'acquire' | 'release';
  /** The lease: unique per acquisition. */
  readonly leaseId: string;
  /** The most leases held at once. */
  readonly limit: number;
  /** How long a lease lives unless released, in ms. */
  readonly ttlMs: number;
  /** As for {@link BucketRequest.timeoutMs}: an acquire given up on takes no lease later. */
  readonly timeoutMs?: number | undefined;
}

/** What a lease operation found. */
export interface LeaseResult {
  /** `acquire`: a lease was taken. `release`: true. */
  readonly applied: boolean;
  /** Leases held after the operation. */
  readonly held: number;
  /** The store's clock when it decided, in ms since the epoch. */
  readonly nowMs: number;
}

/**
 * One operation on a key's reservations by id (see `limiter.reserve`'s `id`), each in one atomic step
 * with the key's buckets. The records live beside the key's buckets (on Redis, in the same slot).
 * - `reserve`: unless `id` is known on the key (open or settled: nothing changes, `'duplicate'`), or
 *   `maxOpen` reservations are open on it (a peek answers, `'too-many-open'`), charge `cost` as a
 *   `consume` does and, when it is charged, record `id` as open for `ttlMs`.
 * - `settle`: if `id` is open, charge `actualCost` less the reserved cost (at most `maxExtraTokens`
 *   more: a `penalty`), or give the difference back as a `refund` with the reservation's `chargedAtMs`
 *   does, and mark it settled until its `ttlMs` ends; else change nothing (`'unknown'`, `'settled'`).
 */
export interface ReservationRequest {
  /** The key's owner, encoded as for {@link BucketRequest.key}. */
  readonly key: string;
  /** As for {@link BucketRequest}: they name the key's buckets. */
  readonly policies: readonly ResolvedPolicy[];
  readonly ban?: BanRule | undefined;
  readonly overrides?: boolean | undefined;
  readonly mode: 'reserve' | 'settle';
  /** The reservation's id: unique per key. */
  readonly id: string;
  /** `reserve`: tokens to charge, a positive finite number. `settle`: the true cost, 0 or more. */
  readonly cost: number;
  /** `reserve`: how long an open reservation is kept, in ms. */
  readonly ttlMs: number;
  /** `reserve`: the most reservations open on the key at once. */
  readonly maxOpen: number;
  /** `settle`: the most one settle charges beyond the reserved cost. */
  readonly maxExtraTokens: number;
  /** As for {@link BucketRequest.timeoutMs}: an operation given up on changes nothing later. */
  readonly timeoutMs?: number | undefined;
}

/**
 * What a reservation operation did: `'reserved'` (charged and recorded), `'refused'` (the consume was
 * refused: nothing charged or recorded), `'too-many-open'`, `'duplicate'`; `'settled'` (this settle
 * moved the charge), `'unknown'` (no such reservation: never made, refused, or forgotten after its ttl),
 * `'already-settled'`.
 */
export type ReservationOutcome =
  | 'reserved'
  | 'refused'
  | 'too-many-open'
  | 'duplicate'
  | 'settled'
  | 'unknown'
  | 'already-settled';

/** The answer to a {@link ReservationRequest}. */
export interface ReservationResult {
  readonly outcome: ReservationOutcome;
  /** The store's clock when it decided, in ms since the epoch. */
  readonly nowMs: number;
  /**
   * `reserve`: the consume's result (a peek's for `'too-many-open'`); absent for `'duplicate'`.
   * `settle`: absent.
   */
  readonly bucket?: BucketResult;
  /** Reservations open on the key after the operation. */
  readonly open: number;
  /** `'settled'`: the cost that was reserved. `'too-many-open'`: when the oldest open one expires (ms). */
  readonly detail?: number;
}

/**
 * Where buckets live. A store decides atomically: all buckets of a request are read, refilled, judged
 * and written as one step, so concurrent requests can never both spend the same token.
 * Implemented by {@link MemoryStore} and {@link RedisStore}; both pass one conformance suite.
 */
export interface Store {
  /** Applies one operation to all buckets of `request.key` atomically. */
  update(request: BucketRequest): Promise<BucketResult>;
  /** Forgets the buckets of `key` for these policies (and ban), so they are full again. */
  reset(key: string, policies: readonly ResolvedPolicy[], ban?: BanRule): Promise<void>;
  /**
   * Takes or ends a lease on `request.key`, atomically, for concurrency limits. Optional: a store without
   * it serves rate limits only. Both `MemoryStore` and `RedisStore` have it.
   */
  lease?(request: LeaseRequest): Promise<LeaseResult>;
  /**
   * Writes, removes or reads a key's override, atomically with the key's checks. Optional: a store
   * without it serves limiters without `overrides`. Both `MemoryStore` and `RedisStore` have it. A
   * change, and the end of an override by its ttl, keep what the client has used (each algorithm's
   * `rebase`), and no bucket is forgotten sooner than the new limits would refill it.
   */
  override?(request: OverrideRequest): Promise<OverrideResult | undefined>;
  /**
   * Reserves, or settles a reservation, by id, atomically with the key's buckets, from any process
   * (see {@link ReservationRequest}). Optional: a store without it serves reservations settled in the
   * process that made them only. Both `MemoryStore` and `RedisStore` have it.
   */
  reservation?(request: ReservationRequest): Promise<ReservationResult>;
  /**
   * Decides a check at once, without a promise: the decision that {@link update}'s result leads to, for
   * a store whose buckets live in this process. Optional. A limiter with no deny cache in front of the
   * store calls it, in place of `update`, for each check that does not wait. `MemoryStore` has it unless
   * a subclass overrides `update`: then that `update` is called, as any store's is.
   */
  readonly decideNow?: ((request: BucketRequest) => Decision) | undefined;
  /**
   * `true` when the store itself gives up after `timeoutMs` (as `RedisStore` does). Otherwise a limiter
   * stops waiting for it after that long on its own, so a store that hangs cannot hang requests.
   */
  readonly enforcesTimeout?: boolean;
  /**
   * `true` when the buckets live in this process, so an answer costs no round trip: a limiter then
   * keeps no deny cache in front of the store. Default: `false`.
   */
  readonly local?: boolean;
  /**
   * The clock the store decides by, when it is an injected one (tests). Limiters measure time spent in
   * their deny cache by it, so a test clock moves the cache and the store together. Default: none (the
   * store's own, e.g. the Redis server's clock, observed through this process's monotonic clock).
   */
  readonly clock?: (() => number) | undefined;
}
