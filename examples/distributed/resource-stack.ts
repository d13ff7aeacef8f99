/** What the demo has started, so it can all be stopped, newest first: at the end, on error, on Ctrl-C. */

/**
 * A stack of stop functions. `unwind(mark)` stops what was started after `mark`, so one step can clean up
 * after itself while a Ctrl-C handler can still stop everything.
 *
 * @example
 * const started = new ResourceStack();
 * const mark = started.size;
 * started.defer(() => proxy.close());
 * await started.unwind(mark);
 */
export class ResourceStack {
  readonly #stops: (() => Promise<void>)[] = [];

  /** How many stop functions are held: a mark for {@link unwind}. */
  get size(): number {
    return this.#stops.length;
  }

  /** Remembers how to stop something just started. */
  defer(stop: () => Promise<void>): void {
    this.#stops.push(stop);
  }

  /** Stops everything started after `mark` (default: everything), newest first; one failure stops no other. */
  async unwind(mark = 0): Promise<void> {
    while (this.#stops.length > mark) {
      const stop = this.#stops.pop() as () => Promise<void>;
      await stop().catch((error: unknown) => console.error(`while stopping: ${(error as Error).message}`));
    }
  }
}
