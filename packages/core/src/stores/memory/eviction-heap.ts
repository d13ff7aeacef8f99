/**
 * Which key to forget when the memory store is full: the one soonest idle — its buckets full again, its
 * windows over (an idle one first, since forgetting it changes nothing) — found in O(log n) without
 * scanning or sorting.
 */

/**
 * A binary min-heap of slots (small whole numbers naming the store's keys) by when each is idle, held in
 * typed arrays so it costs a few bytes per key and nothing for the garbage collector to trace.
 *
 * Kept lazy: when a slot's idle time moves later (every charge does that), the heap is not touched, since
 * its old key is still a lower bound; the slot is put in its true place only if it reaches the top. A
 * charge therefore costs nothing here; only a slot that becomes idle sooner (a refund) moves at once.
 */
export class EvictionHeap {
  /** Slots in heap order. */
  #order = new Int32Array(0);
  #size = 0;
  /** Per slot: when it is idle, in ms since the epoch (the truth). */
  #idleAtMs = new Float64Array(0);
  /** Per slot: a lower bound of its idle time, where it sits in the heap. */
  #heapKey = new Float64Array(0);
  /** Per slot: its index in `#order`. */
  #position = new Int32Array(0);

  get size(): number {
    return this.#size;
  }

  /** Makes room for slots `0 … capacity - 1`. */
  grow(capacity: number): void {
    this.#order = grown(this.#order, capacity);
    this.#idleAtMs = grown(this.#idleAtMs, capacity);
    this.#heapKey = grown(this.#heapKey, capacity);
    this.#position = grown(this.#position, capacity);
  }

  /** When `slot` is idle. */
  idleAtMs(slot: number): number {
    return this.#idleAtMs[slot] as number;
  }

  /** Adds a slot that is idle at `idleAtMs`. */
  push(slot: number, idleAtMs: number): void {
    this.#idleAtMs[slot] = idleAtMs;
    this.#heapKey[slot] = idleAtMs;
    this.#siftUp(slot, this.#size++);
  }

  /** Moves a slot's idle time. */
  update(slot: number, idleAtMs: number): void {
    this.#idleAtMs[slot] = idleAtMs;
    if (idleAtMs >= (this.#heapKey[slot] as number)) return; // later: the old key is still a lower bound
    this.#heapKey[slot] = idleAtMs;
    this.#siftUp(slot, this.#position[slot] as number);
  }

  /** Removes a slot, wherever it is. */
  remove(slot: number): void {
    const last = this.#order[--this.#size] as number;
    if (last === slot) return;
    const index = this.#position[slot] as number;
    this.#siftDown(last, this.#siftUp(last, index));
  }

  /** Removes and returns the slot that is soonest idle, or -1 when empty. */
  popSoonestIdle(): number {
    for (;;) {
      if (this.#size === 0) return -1;
      const top = this.#order[0] as number;
      const idleAtMs = this.#idleAtMs[top] as number;
      if ((this.#heapKey[top] as number) >= idleAtMs) {
        this.remove(top);
        return top;
      }
      this.#heapKey[top] = idleAtMs; // its true place is further down
      this.#siftDown(top, 0);
    }
  }

  /** Places `slot` at `index` or above it, where its parent's key is no greater; returns where. */
  #siftUp(slot: number, index: number): number {
    const order = this.#order;
    const key = this.#heapKey[slot] as number;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = order[parentIndex] as number;
      if ((this.#heapKey[parent] as number) <= key) break;
      this.#place(parent, index);
      index = parentIndex;
    }
    this.#place(slot, index);
    return index;
  }

  /** Places `slot` at `index` or below it, where no child's key is smaller. */
  #siftDown(slot: number, index: number): void {
    const order = this.#order;
    const heapKey = this.#heapKey;
    const key = heapKey[slot] as number;
    const count = this.#size;
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
      this.#place(childSlot, index);
      index = child;
    }
    this.#place(slot, index);
  }

  #place(slot: number, index: number): void {
    this.#order[index] = slot;
    this.#position[slot] = index;
  }
}

/** `array` with room for `length` numbers, its contents kept. */
function grown<A extends Int32Array | Float64Array>(array: A, length: number): A {
  if (array.length >= length) return array;
  const larger = new (array.constructor as new (length: number) => A)(length);
  larger.set(array);
  return larger;
}
