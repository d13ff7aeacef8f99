/** The memory store's leases, for concurrency limits: at most `maxKeys` keys, each found in O(log n). */

import {
  acquireLease,
  type LeaseOutcome,
  type Leases,
  lastLeaseEndsAtMs,
  releaseLease,
} from '../../algorithms/concurrency/leases.js';
import { EvictionHeap } from './eviction-heap.js';

/** Slots to start with; they double as keys come, up to `maxKeys`. */
const FIRST_SLOTS = 1024;

/**
 * Leases by key, bounded by `maxKeys` keys. Each key has a slot in an {@link EvictionHeap} ordered by when
 * its last lease ends, in the exhausted tier while it holds all the leases its limit allows; so every
 * operation, an eviction included, is O(log n) in the keys held (and O(limit) in the key's own leases).
 *
 * A key goes as soon as it holds no lease: when its last one is released, or, once its last one has
 * expired, at the next operation on the table. When the table is full of keys with live leases, a new key
 * takes the place of the one whose last lease ends soonest, among keys that are not at their limit if any
 * is (see `MemoryStoreOptions.maxKeys` for why a new key is never refused).
 */
export class LeaseTable {
  readonly #maxKeys: number;
  readonly #slots = new Map<string, number>();
  /** Per slot: its key and its leases (`undefined`: the slot is free). */
  readonly #owners: (string | undefined)[] = [];
  readonly #leases: (Leases | undefined)[] = [];
  readonly #heap = new EvictionHeap();
  #capacity = 0;
  /** Slots never used start here; freed ones wait in `#freeSlots`. */
  #nextSlot = 0;
  readonly #freeSlots: number[] = [];

  constructor(maxKeys: number) {
    this.#maxKeys = maxKeys;
  }

  /** The number of keys holding leases (a key whose last lease just expired may count until the next call). */
  get size(): number {
    return this.#heap.size;
  }

  /** Takes a lease for `ttlMs` on `key` if it holds fewer than `limit`, or ends one: `leases.ts` semantics. */
  lease(
    mode: 'acquire' | 'release',
    key: string,
    id: string,
    limit: number,
    ttlMs: number,
    nowMs: number,
  ): LeaseOutcome {
    this.#forgetExpired(nowMs);
    const slot = this.#slots.get(key);
    // A key not held has no lease to end: answer as `releaseLease` would, without making one up.
    if (slot === undefined && mode === 'release') return { applied: true, held: 0 };
    const leases = slot === undefined ? new Map<string, number>() : (this.#leases[slot] as Leases);
    const outcome =
      mode === 'acquire' ? acquireLease(leases, id, limit, ttlMs, nowMs) : releaseLease(leases, id, nowMs);
    const atLimit = outcome.held >= limit;
    if (outcome.held === 0) {
      if (slot !== undefined) {
        this.#heap.remove(slot);
        this.#free(slot);
      }
    } else if (slot === undefined) {
      this.#insert(key, leases, lastLeaseEndsAtMs(leases), atLimit, nowMs);
    } else {
      this.#heap.update(slot, lastLeaseEndsAtMs(leases), atLimit);
    }
    return outcome;
  }

  /** Forgets every key whose last lease has ended: each costs O(log n), once. */
  #forgetExpired(nowMs: number): void {
    for (let slot = this.#heap.popIdle(nowMs); slot !== -1; slot = this.#heap.popIdle(nowMs)) {
      this.#free(slot);
    }
  }

  /** A slot for a new key: a free one, a new one, or, at `maxKeys`, the one {@link EvictionHeap} gives up. */
  #insert(key: string, leases: Leases, endsAtMs: number, atLimit: boolean, nowMs: number): void {
    let slot: number;
    if (this.#heap.size >= this.#maxKeys) {
      slot = this.#heap.popToEvict(nowMs);
      this.#slots.delete(this.#owners[slot] as string);
    } else {
      slot = this.#freeSlots.pop() ?? this.#nextSlot++;
      if (slot >= this.#capacity) {
        this.#capacity = Math.min(this.#maxKeys, Math.max(FIRST_SLOTS, 2 * this.#capacity));
        this.#heap.grow(this.#capacity);
      }
    }
    this.#owners[slot] = key;
    this.#leases[slot] = leases;
    this.#slots.set(key, slot);
    this.#heap.push(slot, endsAtMs, atLimit);
  }

  /** Frees a slot already out of the heap. */
  #free(slot: number): void {
    this.#slots.delete(this.#owners[slot] as string);
    this.#owners[slot] = undefined;
    this.#leases[slot] = undefined;
    this.#freeSlots.push(slot);
  }
}
