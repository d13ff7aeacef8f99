/** A clock the runs move by hand, so every run of the real limiters decides at the same instants. */

/** Any fixed instant would do; a realistic one keeps the stores' arithmetic on ordinary numbers. */
const START_MS = Date.UTC(2025, 0, 1);

/** A clock for `MemoryStore({ clock })`: `now()` is `START_MS + atMs`, where `atMs` is set by the run. */
export interface VirtualClock {
  /** Milliseconds since the epoch, as a store reads its clock. */
  readonly now: () => number;
  /** Milliseconds since the start of the run. */
  readonly atMs: () => number;
  /** Moves the clock to `atMs` after the start of the run (never backwards). */
  set(atMs: number): void;
}

/**
 * A clock at the start of a run.
 *
 * @example
 * const clock = virtualClock();
 * const store = new MemoryStore({ clock: clock.now });
 * clock.set(250); // the store now decides 250 ms into the run
 */
export function virtualClock(): VirtualClock {
  let atMs = 0;
  return {
    now: () => START_MS + atMs,
    atMs: () => atMs,
    set(nextMs) {
      if (nextMs < atMs) throw new RangeError(`the clock only moves forward: ${nextMs} < ${atMs}`);
      atMs = nextMs;
    },
  };
}
