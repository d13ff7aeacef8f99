/** Buckets in this process's memory: the default store, for one server, for tests, and as insurance. */

import { decideFields } from '../../algorithms/decide.js';
import { refillBoundMs } from '../../algorithms/policies.js';
import { ALGORITHMS } from '../../algorithms/registry.js';
import {
  openReservations,
  type ReservationBook,
  settleDelta,
  trimSettled,
} from '../../algorithms/reservations/reservations.js';
import {
  policyStates,
  rebasePolicies,
  type Settled,
  settlePolicies,
  stateFieldCount,
} from '../../algorithms/settle.js';
import type { BanRule } from '../../model/ban.js';
import type { Decision } from '../../model/decision.js';
import type { ResolvedPolicy } from '../../model/policy.js';
import type {
  BucketRequest,
  BucketResult,
  LeaseRequest,
  LeaseResult,
  OverrideRequest,
  OverrideResult,
  ReservationRequest,
  ReservationResult,
  Store,
} from '../../model/store.js';
import { TollgateArgumentError } from '../../support/argument-error.js';
import { TollgateOptionError } from '../../support/option-error.js';
import { policySetKey } from '../policy-set-key.js';
import { EvictionHeap } from './eviction-heap.js';
import { refusesAgain } from './exhausted.js';
import { LeaseTable } from './lease-table.js';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * The most keys kept for rate limits (one per identity and set of policies, holding all of its
   * buckets), and, apart from those, the most keys holding leases for concurrency limits, and the most
   * holding reservations by id: budgets of their own, so that a flood of one kind never pushes out
   * another. Default: `100_000` (of each).
   *
   * Rate limits: when full, a new key takes the place of an idle one (buckets full again, windows over:
   * forgetting it changes nothing) if there is one, else of the one soonest idle among those that would
   * admit a request. A key that is refusing requests (it would refuse the same request again, or is
   * banned) is forgotten only when every key is: a flood of made-up names must never hand an attacker's
   * exhausted window its attempts back. Then the exhausted key soonest idle goes.
   *
   * Leases: keys whose leases have all ended go first. When every key still holds a live lease, a new key
   * takes the place of the one whose last lease ends soonest (one below its limit, if any is): that client
   * may briefly run up to twice its limit at once, until its old leases end. A new key is never refused
   * instead: then a flood of made-up identities holding one lease each would lock every new client out for
   * as long as it lasts, where evicting costs one client an overrun, and only after `maxKeys` newer keys.
   *
   * Reservations by id (`reserve`'s `id`): at most this many keys hold them, apart from the other two;
   * past it, a new key's take the place of a key's whose have all ended, else of the oldest key's
   * (they stay charged, and can no longer be settled by id).
   *
   * @example
   * new MemoryStore({ maxKeys: 10_000 }); // 10k rate-limit keys, and 10k keys holding leases
   */
  maxKeys?: number;
  /** The clock, in ms since the epoch. Default: `Date.now`. Inject one in tests. */
  clock?: () => number;
}

/**
 * The keys of one policy set (and ban): each key's slot, how many numbers its states take, and the keys'
 * overrides.
 */
interface Table {
  readonly slots: Map<string, number>;
  readonly fields: number;
  readonly overrides: Map<string, StoredOverride>;
  /** The keys' reservations by id (see {@link Store.reservation}). */
  readonly books: Map<string, ReservationBook>;
}

/**
 * An override as the memory store holds it: the policies it decides by, and when it ends (ms). Kept after
 * its end, until `forgetAtMs`, so that a state written under it is read in its terms and converted.
 */
interface StoredOverride {
  readonly policies: readonly ResolvedPolicy[];
  /** `Infinity`: when it is removed. */
  readonly expiresAtMs: number;
  /** When no state written under it can be left: its end, and a full refill by the policies' own limits. */
  readonly forgetAtMs: number;
}

/** Slots to start with; they double as keys come, up to `maxKeys`. */
const FIRST_SLOTS = 1024;

/**
 * A store in process memory with the same semantics as {@link RedisStore}. Bounded by `maxKeys` with
 * O(log n) eviction and no timers, so it never stalls or keeps the process alive. Counts are per process:
 * behind a load balancer use Redis.
 *
 * Each key has a slot: its numbers live in typed arrays, changed in place, so a check allocates nothing
 * that lives on and a key costs little more than its name and its map entry.
 *
 * @example
 * const limiter = createLimiter({ store: new MemoryStore({ maxKeys: 10_000 }), policies: { limit: 5, window: '1s' } });
 */
export class MemoryStore implements Store {
  /** {@inheritDoc Store.local} */
  readonly local = true;
  /** {@inheritDoc Store.decideNow} */
  readonly decideNow: ((request: BucketRequest) => Decision) | undefined;
  /** {@inheritDoc Store.clock} */
  readonly clock: (() => number) | undefined;
  readonly #now: () => number;
  readonly #maxKeys: number;
  /** Keys by policy set: limiters with equal policies and namespace share buckets, as on Redis. */
  readonly #tables = new Map<string, Table>();
  readonly #tableOf = new WeakMap<object, Table>();
  /** The last policies (or ban) asked about, and their table: most stores serve one limiter. */
  #lastAsked: object | undefined;
  #lastTable: Table | undefined;
  readonly #heap = new EvictionHeap();
  /** Per slot: its key, and its table (`undefined`: the slot is free). */
  readonly #owners: (string | undefined)[] = [];
  readonly #tableOfSlot: (Table | undefined)[] = [];
  /** Per slot: its states, `#stride` numbers from `slot * #stride`. */
  #values = new Float64Array(0);
  /** The most numbers any table's states take. */
  #stride = 0;
  #capacity = 0;
  /** Slots never used start here; freed ones wait in `#freeSlots`. */
  #nextSlot = 0;
  readonly #freeSlots: number[] = [];
  /** Where a check brings a key's states forward before they are written back (or not). */
  #work = new Float64Array(0);
  /** The policies the last settle was decided by when an override was in force; `undefined`: none was. */
  #overridden: readonly ResolvedPolicy[] | undefined;
  /** Leases by key, for concurrency limits, bounded by `maxKeys` apart from the rate-limit keys. */
  readonly #leases: LeaseTable;
  /** How many keys hold a reservation book, in every table: at most `maxKeys`. */
  #books = 0;

  constructor(options: MemoryStoreOptions = {}) {
    const { maxKeys = 100_000, clock } = options;
    if (!Number.isSafeInteger(maxKeys) || maxKeys <= 0) {
      throw new TollgateOptionError(
        `MemoryStore maxKeys must be a positive whole number; got ${String(maxKeys)}`,
      );
    }
    if (clock !== undefined && typeof clock !== 'function') {
      throw new TollgateOptionError('MemoryStore clock must be a function returning ms');
    }
    this.#maxKeys = maxKeys;
    this.#leases = new LeaseTable(maxKeys);
    this.clock = clock;
    this.#now = clock ?? Date.now;
    // A subclass that wraps update() is called through it.
    this.decideNow =
      this.update === MemoryStore.prototype.update ? (request) => this.#decideNow(request) : undefined;
  }

  /**
   * The number of rate-limit keys held now (keys holding leases are not counted). A key an operation
   * leaves idle is forgotten at once; one that became idle over time stays until it is read, reset or
   * evicted.
   */
  get size(): number {
    return this.#heap.size;
  }

  /** {@inheritDoc Store.update} */
  async update(request: BucketRequest): Promise<BucketResult> {
    return this.#updateAt(request, this.#checkedNow());
  }

  #updateAt(request: BucketRequest, nowMs: number): BucketResult {
    const { applied, bannedUntilMs, backoffUntilMs } = this.#settle(request, nowMs);
    const overridden = this.#overridden;
    const states = policyStates(overridden ?? request.policies, this.#work);
    const result: BucketResult = request.ban?.exponentialBackoff
      ? { applied, nowMs, states, bannedUntilMs, backoffUntilMs }
      : { applied, nowMs, states, bannedUntilMs };
    return overridden === undefined ? result : { ...result, policies: overridden };
  }

  /** {@link update} and the decision it makes, without copying the states out. */
  #decideNow(request: BucketRequest): Decision {
    const nowMs = this.#checkedNow();
    const { applied, bannedUntilMs, backoffUntilMs } = this.#settle(request, nowMs);
    const policies = this.#overridden ?? request.policies;
    return decideFields(policies, this.#work, applied, nowMs, bannedUntilMs, backoffUntilMs, request.cost);
  }

  /**
   * Settles `request` at `nowMs`, leaving the key's states in `#work`, and in `#overridden` the policies
   * of the override it was decided by (`undefined`: none was in force).
   */
  #settle(
    { key, policies: own, cost, mode, ban, overrides, chargedAtMs, maxWaitMs }: BucketRequest,
    nowMs: number,
  ): Settled {
    const table = this.#table(own, ban);
    const record = overrides === true ? this.#recordOf(table, key, nowMs) : undefined;
    const override = record !== undefined && record.expiresAtMs > nowMs ? record : undefined;
    const policies = override?.policies ?? own;
    this.#overridden = override?.policies;
    const work = this.#work;
    let slot = table.slots.get(key);
    const stored = slot !== undefined && this.#heap.idleAtMs(slot) > nowMs;
    if (stored) copy(this.#values, (slot as number) * this.#stride, work, 0, table.fields);
    // An override that has ended: what was written under it is read in its terms, then in the policies'.
    if (stored && record !== undefined && override === undefined) {
      rebasePolicies(record.policies, own, work, record.expiresAtMs, record.expiresAtMs);
    }
    const settled = settlePolicies(
      policies,
      work,
      stored,
      cost,
      mode,
      nowMs,
      ban,
      chargedAtMs ?? nowMs,
      maxWaitMs,
    );
    let { keepMs } = settled;
    if (override !== undefined && keepMs !== undefined) {
      // Kept, too, until the policies' own limits would have refilled it once the override is over.
      const endsMs = override.expiresAtMs;
      const remainingMs = endsMs === Number.POSITIVE_INFINITY ? 0 : endsMs - nowMs;
      keepMs = Math.max(keepMs, remainingMs + idleMsUnder(own, work, nowMs));
      if (endsMs !== Number.POSITIVE_INFINITY) {
        // Read in their terms from its end, as the next check will read it: what was used of a larger
        // burst stays used, and takes longer to refill than the level alone says.
        const ended = work.slice(0, table.fields);
        rebasePolicies(override.policies, own, ended, endsMs, endsMs);
        keepMs = Math.max(keepMs, idleMsUnder(own, ended, nowMs));
      }
    }
    if (keepMs === 0) {
      if (slot !== undefined) this.#forget(slot);
    } else if (keepMs !== undefined) {
      const heldUntilMs = Math.max(settled.bannedUntilMs, settled.backoffUntilMs);
      const exhausted = refusesAgain(policies, work, cost, nowMs, heldUntilMs);
      if (slot === undefined) {
        slot = this.#insert(table, key, nowMs + keepMs, exhausted, nowMs);
      } else {
        this.#heap.update(slot, nowMs + keepMs, exhausted);
      }
      copy(work, 0, this.#values, slot * this.#stride, table.fields);
    }
    return settled;
  }

  /** The key's override, in force or ended but not yet forgotten at `nowMs`. */
  #recordOf(table: Table, key: string, nowMs: number): StoredOverride | undefined {
    if (table.overrides.size === 0) return undefined;
    const override = table.overrides.get(key);
    if (override === undefined || override.forgetAtMs > nowMs) return override;
    table.overrides.delete(key);
    return undefined;
  }

  /** {@inheritDoc Store.override} */
  async override(request: OverrideRequest): Promise<OverrideResult | undefined> {
    const { key, policies, ban, mode, override, ttlMs } = request;
    const nowMs = this.#checkedNow();
    const table = this.#table(policies, ban);
    const record = this.#recordOf(table, key, nowMs);
    const before = record !== undefined && record.expiresAtMs > nowMs ? record : undefined;
    if (mode === 'get') return before && resultOf(before);
    let written: StoredOverride | undefined;
    if (mode === 'set') {
      if (override === undefined) throw new TollgateArgumentError('an override to set needs its policies');
      const expiresAtMs = ttlMs === undefined ? Number.POSITIVE_INFINITY : nowMs + ttlMs;
      written = { policies: override, expiresAtMs, forgetAtMs: expiresAtMs + refillBoundMs(policies) };
      this.#dropForgottenOverrides(table, nowMs);
      table.overrides.set(key, written);
    } else {
      table.overrides.delete(key);
    }
    const slot = table.slots.get(key);
    if (
      slot === undefined ||
      this.#heap.idleAtMs(slot) <= nowMs ||
      (record === undefined && written === undefined)
    ) {
      return written && resultOf(written);
    }
    // The buckets go on from what the client has used, in the terms of the limits now in force.
    const work = this.#work;
    copy(this.#values, slot * this.#stride, work, 0, table.fields);
    if (record !== undefined && before === undefined) {
      rebasePolicies(record.policies, policies, work, record.expiresAtMs, record.expiresAtMs);
    }
    rebasePolicies(before?.policies ?? policies, written?.policies ?? policies, work, nowMs, nowMs + 1);
    copy(work, 0, this.#values, slot * this.#stride, table.fields);
    // None may be forgotten before the limits now in force refill it.
    this.#heap.extend(slot, nowMs + refillBoundMs(written?.policies ?? policies));
    return written && resultOf(written);
  }

  /** Forgets overrides no state can be left from, so that a table holds no more of them than it needs. */
  #dropForgottenOverrides(table: Table, nowMs: number): void {
    for (const [key, { forgetAtMs }] of table.overrides) {
      if (forgetAtMs <= nowMs) table.overrides.delete(key);
    }
  }

  /**
   * {@inheritDoc Store.reservation}
   *
   * Each key's book is scanned by each of its operations (O(open reservations)), and at most `maxKeys`
   * keys hold one: past it, a new key's book takes the place of one whose records have all ended, else
   * of the oldest (its open reservations stay charged and can no longer be settled).
   */
  async reservation(request: ReservationRequest): Promise<ReservationResult> {
    const { key, id, cost, mode, maxOpen } = request;
    const nowMs = this.#checkedNow();
    const books = this.#table(request.policies, request.ban).books;
    const book = books.get(key) ?? new Map();
    const { open, firstEndsAtMs } = openReservations(book, nowMs);
    const known = book.get(id);
    const bucketRequest = { key, policies: request.policies, ban: request.ban, overrides: request.overrides };
    if (mode === 'settle') {
      if (known === undefined || known.settled) {
        this.#keepBook(books, key, book);
        return { outcome: known === undefined ? 'unknown' : 'already-settled', nowMs, open };
      }
      const tokens = settleDelta(known.cost, cost, request.maxExtraTokens);
      if (tokens !== 0) {
        const chargedAtMs = tokens > 0 ? undefined : known.chargedAtMs;
        const adjustMode = tokens > 0 ? 'penalty' : 'refund';
        this.#updateAt({ ...bucketRequest, cost: Math.abs(tokens), mode: adjustMode, chargedAtMs }, nowMs);
      }
      known.settled = true;
      this.#keepBook(books, key, book);
      return { outcome: 'settled', nowMs, open: open - 1, detail: known.cost };
    }
    if (known !== undefined) return { outcome: 'duplicate', nowMs, open };
    if (open >= maxOpen) {
      const bucket = this.#updateAt({ ...bucketRequest, cost, mode: 'peek' }, nowMs);
      return { outcome: 'too-many-open', nowMs, bucket, open, detail: firstEndsAtMs };
    }
    const bucket = this.#updateAt({ ...bucketRequest, cost, mode: 'consume' }, nowMs);
    if (!bucket.applied) return { outcome: 'refused', nowMs, bucket, open };
    trimSettled(book, maxOpen);
    book.set(id, { cost, chargedAtMs: nowMs, expiresAtMs: nowMs + request.ttlMs, settled: false });
    this.#keepBook(books, key, book);
    return { outcome: 'reserved', nowMs, bucket, open: open + 1 };
  }

  /** Keeps `book` as `key`'s while it holds a record, within `maxKeys` books in all; else forgets it. */
  #keepBook(books: Map<string, ReservationBook>, key: string, book: ReservationBook): void {
    const held = books.get(key) === book;
    if (book.size === 0) {
      if (held) {
        books.delete(key);
        this.#books--;
      }
      return;
    }
    if (held) return;
    if (this.#books >= this.#maxKeys) this.#dropBook(books);
    books.set(key, book);
    this.#books++;
  }

  /** Makes room for a book: forgets every book whose records have all ended, else this table's oldest. */
  #dropBook(books: Map<string, ReservationBook>): void {
    const nowMs = this.#checkedNow();
    for (const { books: others } of this.#tables.values()) {
      for (const [key, other] of others) {
        openReservations(other, nowMs);
        if (other.size === 0) {
          others.delete(key);
          this.#books--;
        }
      }
    }
    if (this.#books < this.#maxKeys) return;
    for (const table of [books, ...[...this.#tables.values()].map((t) => t.books)]) {
      const oldest = table.keys().next();
      if (!oldest.done) {
        table.delete(oldest.value);
        this.#books--;
        return;
      }
    }
  }

  /** {@inheritDoc Store.lease} */
  async lease({ key, mode, leaseId, limit, ttlMs }: LeaseRequest): Promise<LeaseResult> {
    const nowMs = this.#checkedNow();
    const { applied, held } = this.#leases.lease(mode, key, leaseId, limit, ttlMs, nowMs);
    return { applied, held, nowMs };
  }

  /** {@inheritDoc Store.reset} */
  async reset(key: string, policies: readonly ResolvedPolicy[], ban?: BanRule): Promise<void> {
    const slot = this.#table(policies, ban).slots.get(key);
    if (slot !== undefined) this.#forget(slot);
  }

  #checkedNow(): number {
    const nowMs = Math.floor(this.#now());
    if (!Number.isFinite(nowMs)) {
      throw new TollgateOptionError(`MemoryStore clock must return ms since the epoch; got ${String(nowMs)}`);
    }
    return nowMs;
  }

  #table(policies: readonly ResolvedPolicy[], ban: BanRule | undefined): Table {
    const asked = ban ?? policies;
    if (asked === this.#lastAsked) return this.#lastTable as Table;
    let table = this.#tableOf.get(asked);
    if (table === undefined) {
      const setKey = policySetKey(policies, ban);
      table = this.#tables.get(setKey) ?? {
        slots: new Map(),
        fields: stateFieldCount(policies, ban),
        overrides: new Map(),
        books: new Map(),
      };
      this.#tables.set(setKey, table);
      this.#tableOf.set(asked, table);
      this.#fit(table.fields);
    }
    this.#lastAsked = asked;
    this.#lastTable = table;
    return table;
  }

  /** A slot for a new key of `table`, idle at `idleAtMs`: a free one, a new one, or the one evicted. */
  #insert(table: Table, key: string, idleAtMs: number, exhausted: boolean, nowMs: number): number {
    let slot: number;
    if (this.#heap.size >= this.#maxKeys) {
      slot = this.#heap.popToEvict(nowMs);
      (this.#tableOfSlot[slot] as Table).slots.delete(this.#owners[slot] as string);
    } else {
      slot = this.#freeSlots.pop() ?? this.#nextSlot++;
      if (slot >= this.#capacity)
        this.#resize(Math.min(this.#maxKeys, Math.max(FIRST_SLOTS, 2 * this.#capacity)), this.#stride);
    }
    this.#owners[slot] = key;
    this.#tableOfSlot[slot] = table;
    table.slots.set(key, slot);
    this.#heap.push(slot, idleAtMs, exhausted);
    return slot;
  }

  #forget(slot: number): void {
    (this.#tableOfSlot[slot] as Table).slots.delete(this.#owners[slot] as string);
    this.#heap.remove(slot);
    this.#owners[slot] = undefined;
    this.#tableOfSlot[slot] = undefined;
    this.#freeSlots.push(slot);
  }

  /** Makes every slot wide enough for `fields` numbers. */
  #fit(fields: number): void {
    if (fields <= this.#stride) return;
    this.#work = new Float64Array(fields);
    this.#resize(this.#capacity, fields);
  }

  /** Moves the slots' states into arrays for `capacity` slots of `stride` numbers each. */
  #resize(capacity: number, stride: number): void {
    const values = new Float64Array(capacity * stride);
    const old = this.#values;
    const oldStride = this.#stride;
    if (stride === oldStride) {
      values.set(old);
    } else {
      for (let slot = 0; slot < this.#nextSlot; slot++) {
        copy(old, slot * oldStride, values, slot * stride, oldStride);
      }
    }
    this.#values = values;
    this.#stride = stride;
    this.#capacity = capacity;
    this.#heap.grow(capacity);
  }
}

/** How long the states in `st` (brought to `nowMs`) take to be as good as fresh under `policies`. */
function idleMsUnder(policies: readonly ResolvedPolicy[], st: Float64Array, nowMs: number): number {
  let idleMs = 0;
  for (let i = 0, o = 0; i < policies.length; i++) {
    const policy = policies[i] as ResolvedPolicy;
    const algorithm = ALGORITHMS[policy.algorithm];
    idleMs = Math.max(idleMs, algorithm.idleMs(policy, st, o, nowMs));
    o += algorithm.fields;
  }
  return idleMs;
}

function resultOf({ policies, expiresAtMs }: StoredOverride): OverrideResult {
  return { policies, expiresAtMs: expiresAtMs === Number.POSITIVE_INFINITY ? undefined : expiresAtMs };
}

/** Copies `count` numbers; a loop, since views of typed arrays would be allocated on every check. */
function copy(from: Float64Array, fromIndex: number, to: Float64Array, toIndex: number, count: number): void {
  for (let k = 0; k < count; k++) to[toIndex + k] = from[fromIndex + k] as number;
}
