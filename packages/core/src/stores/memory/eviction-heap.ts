/**
 * Which key to forget when the memory store is full: the one soonest idle — its buckets full again, its
 * windows over (an idle one first, since forgetting it changes nothing) — found in O(log n) without
 * scanning or sorting.
 */

/** What the heap orders. `idleAtMs` is the truth; `heapKey` and `heapIndex` are the heap's own. */
export interface HeapEntry {
  /** When the key's states say no more than fresh ones (buckets full, windows over), in ms since the epoch. */
  idleAtMs: number;
  /** A lower bound of `idleAtMs`: where the entry sits in the heap. */
  heapKey: number;
  /** The entry's position in the heap array. */
  heapIndex: number;
}

/**
 * A binary min-heap of entries by `heapKey`, kept lazy: when an entry's `idleAtMs` moves later (every
 * charge does that), the heap is not touched, since the old key is still a lower bound; the entry is put
 * in its true place only if it reaches the top. A charge therefore costs nothing here; only an entry
 * that becomes idle sooner (a refund) moves at once.
 */
export class EvictionHeap<E extends HeapEntry> {
  readonly #entries: E[] = [];

  get size(): number {
    return this.#entries.length;
  }

  /** Adds an entry, keyed by its `idleAtMs`. */
  push(entry: E): void {
    entry.heapKey = entry.idleAtMs;
    entry.heapIndex = this.#entries.length;
    this.#entries.push(entry);
    this.#siftUp(entry.heapIndex);
  }

  /** Call after changing an entry's `idleAtMs`. */
  updated(entry: E): void {
    if (entry.idleAtMs >= entry.heapKey) return; // later: the old key is still a lower bound
    entry.heapKey = entry.idleAtMs;
    this.#siftUp(entry.heapIndex);
  }

  /** Removes an entry, wherever it is. */
  remove(entry: E): void {
    const last = this.#entries.pop() as E;
    if (last === entry) return;
    this.#place(last, entry.heapIndex);
    this.#siftDown(this.#siftUp(entry.heapIndex));
  }

  /** Removes and returns the entry that is soonest idle, or `undefined` when empty. */
  popSoonestIdle(): E | undefined {
    for (;;) {
      const top = this.#entries[0];
      if (top === undefined || top.heapKey >= top.idleAtMs) {
        if (top !== undefined) this.remove(top);
        return top;
      }
      top.heapKey = top.idleAtMs; // its true place is further down
      this.#siftDown(0);
    }
  }

  #siftUp(index: number): number {
    const entries = this.#entries;
    const entry = entries[index] as E;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = entries[parentIndex] as E;
      if (parent.heapKey <= entry.heapKey) break;
      this.#place(parent, index);
      index = parentIndex;
    }
    this.#place(entry, index);
    return index;
  }

  #siftDown(index: number): void {
    const entries = this.#entries;
    const entry = entries[index] as E;
    const count = entries.length;
    for (;;) {
      let child = 2 * index + 1;
      if (child >= count) break;
      const right = child + 1;
      if (right < count && (entries[right] as E).heapKey < (entries[child] as E).heapKey) child = right;
      if ((entries[child] as E).heapKey >= entry.heapKey) break;
      this.#place(entries[child] as E, index);
      index = child;
    }
    this.#place(entry, index);
  }

  #place(entry: E, index: number): void {
    this.#entries[index] = entry;
    entry.heapIndex = index;
  }
}
