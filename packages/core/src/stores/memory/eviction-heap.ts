/**
 * Which key to forget when the memory store is full: an idle one if there is one (forgetting it changes
 * nothing), else the soonest idle of those still admitting requests, and an exhausted one only when no
 * other is left — found in O(log n) without scanning or sorting.
 */

/** One tier's binary heap: its slots in heap order, the first `size` of `order`. */
interface Tier {
  order: Int32Array;
  size: number;
}

/**
 * Slots (small whole numbers naming the store's keys) by when each is idle, in two binary min-heaps held
 * in typed arrays, so it costs a few bytes per key and nothing for the garbage collector to trace:
 * - *open*: keys that would admit a request now;
 * - *exhausted*: keys that would refuse one (limited, banned, or holding every lease they may).
 *
 * Two heaps rather than one ordered by idle time: a window's count is exhausted soonest idle of all when
 * it is the oldest, so ordering by idle time alone would free an attacker's exhausted login window first
 * in a flood of made-up names. An exhausted key stays in its tier until it is next written, even once it
 * recovers: it is then kept longer than it need be, never shorter.
 *
 * Kept lazy: when a slot's idle time moves later (every charge does that), the heap is not touched, since
 * its old key is still a lower bound; the slot is put in its true place only if it reaches the top. A
 * charge therefore costs nothing here; only a slot that becomes idle sooner (a refund) or changes tier
 * moves at once.
 */
export class EvictionHeap {
  readonly #open: Tier = { order: new Int32Array(0), size: 0 };
  readonly #exhausted: Tier = { order: new Int32Array(0), size: 0 };
  /** Per slot: 1 when it is in the exhausted tier. */
  #inExhausted = new Uint8Array(0);
  /** Per slot: when it is idle, in ms since the epoch (the truth). */
  #idleAtMs = new Float64Array(0);
  /** Per slot: a lower bound of its idle time, where it sits in its heap. */
  #heapKey = new Float64Array(0);
  /** Per slot: its index in its tier's `order`. */
  #position = new Int32Array(0);

  /** The slots held, in both tiers. */
  get size(): number {
    return this.#open.size + this.#exhausted.size;
  }

  /** Makes room for slots `0 … capacity - 1`. */
  grow(capacity: number): void {
    this.#open.order = grown(this.#open.order, capacity);
    this.#exhausted.order = grown(this.#exhausted.order, capacity);
    this.#inExhausted = grown(this.#inExhausted, capacity);
    this.#idleAtMs = grown(this.#idleAtMs, capacity);
    this.#heapKey = grown(this.#heapKey, capacity);
    this.#position = grown(this.#position, capacity);
  }

  /** When `slot` is idle. */
  idleAtMs(slot: number): number {
    return this.#idleAtMs[slot] as number;
  }

  /** Adds a slot that is idle at `idleAtMs`; `exhausted`: it would refuse a request now. */
  push(slot: number, idleAtMs: number, exhausted: boolean): void {
    this.#idleAtMs[slot] = idleAtMs;
    this.#heapKey[slot] = idleAtMs;
    this.#inExhausted[slot] = exhausted ? 1 : 0;
    const tier = exhausted ? this.#exhausted : this.#open;
    this.#siftUp(tier, slot, tier.size++);
  }

  /** Moves a slot's idle time, and its tier if it became exhausted or stopped being so. */
  update(slot: number, idleAtMs: number, exhausted: boolean): void {
    if ((this.#inExhausted[slot] === 1) !== exhausted) {
      this.remove(slot);
      this.push(slot, idleAtMs, exhausted);
      return;
    }
    this.#idleAtMs[slot] = idleAtMs;
    if (idleAtMs >= (this.#heapKey[slot] as number)) return; // later: the old key is still a lower bound
    this.#heapKey[slot] = idleAtMs;
    this.#siftUp(this.#tierOf(slot), slot, this.#position[slot] as number);
  }

  /** Keeps a slot until `idleAtMs` at least, in its tier: a later idle time needs no move. */
  extend(slot: number, idleAtMs: number): void {
    if (idleAtMs > (this.#idleAtMs[slot] as number)) this.#idleAtMs[slot] = idleAtMs;
  }

  /** Removes a slot, wherever it is. */
  remove(slot: number): void {
    const tier = this.#tierOf(slot);
    const last = tier.order[--tier.size] as number;
    if (last === slot) return;
    const index = this.#position[slot] as number;
    this.#siftDown(tier, last, this.#siftUp(tier, last, index));
  }

  /**
   * Removes and returns the slot to forget at `nowMs`, or -1 when empty: an idle one, else the soonest
   * idle open one, else (every key is exhausted) the soonest idle exhausted one.
   */
  popToEvict(nowMs: number): number {
    let slot = this.#idleTop(this.#exhausted, nowMs);
    if (slot === -1) slot = this.#settledTop(this.#open); // an idle open one, if any, is its top
    if (slot === -1) slot = this.#settledTop(this.#exhausted);
    if (slot !== -1) this.remove(slot);
    return slot;
  }

  /** Removes and returns a slot idle by `nowMs`, or -1 when none is. */
  popIdle(nowMs: number): number {
    let slot = this.#idleTop(this.#open, nowMs);
    if (slot === -1) slot = this.#idleTop(this.#exhausted, nowMs);
    if (slot !== -1) this.remove(slot);
    return slot;
  }

  #tierOf(slot: number): Tier {
    return this.#inExhausted[slot] === 1 ? this.#exhausted : this.#open;
  }

  /** The tier's soonest idle slot if it is idle by `nowMs`, else -1. */
  #idleTop(tier: Tier, nowMs: number): number {
    const top = this.#settledTop(tier);
    return top !== -1 && (this.#idleAtMs[top] as number) <= nowMs ? top : -1;
  }

  /** The tier's soonest idle slot, moved down until its heap key is its idle time; -1 when empty. */
  #settledTop(tier: Tier): number {
    for (;;) {
      if (tier.size === 0) return -1;
      const top = tier.order[0] as number;
      const idleAtMs = this.#idleAtMs[top] as number;
      if ((this.#heapKey[top] as number) >= idleAtMs) return top;
      this.#heapKey[top] = idleAtMs; // its true place is further down
      this.#siftDown(tier, top, 0);
    }
  }

  /** Places `slot` at `index` or above it, where its parent's key is no greater; returns where. */
  #siftUp(tier: Tier, slot: number, index: number): number {
    const order = tier.order;
    const key = this.#heapKey[slot] as number;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = order[parentIndex] as number;
      if ((this.#heapKey[parent] as number) <= key) break;
      this.#place(order, parent, index);
      index = parentIndex;
    }
    this.#place(order, slot, index);
    return index;
  }

  /** Places `slot` at `index` or below it, where no child's key is smaller. */
  #siftDown(tier: Tier, slot: number, index: number): void {
    const order = tier.order;
    const heapKey = this.#heapKey;
    const key = heapKey[slot] as number;
    const count = tier.size;
    for (;;) {
      let child = 2 * index + 1;
      if (child >= count) break;
      const right = child + 1;
      if (
        right < count &&
        (heapKey[order[right] as number] as number) < (heapKey[order[child] as number] as number)
      ) {
        child = right;
      }
      const childSlot = order[child] as number;
      if ((heapKey[childSlot] as number) >= key) break;
      this.#place(order, childSlot, index);
      index = child;
    }
    this.#place(order, slot, index);
  }

  #place(order: Int32Array, slot: number, index: number): void {
    order[index] = slot;
    this.#position[slot] = index;
  }
}

/** `array` with room for `length` numbers, its contents kept. */
function grown<A extends Int32Array | Float64Array | Uint8Array>(array: A, length: number): A {
  if (array.length >= length) return array;
  const larger = new (array.constructor as new (length: number) => A)(length);
  larger.set(array);
  return larger;
}
