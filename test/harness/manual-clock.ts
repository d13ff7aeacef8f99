/** A clock that moves only when a test says so. */

/** A settable clock in ms; pass `clock.now` to a store. */
export interface ManualClock {
  readonly now: () => number;
  advance(ms: number): void;
  set(ms: number): void;
}

/** Starts at a fixed, realistic epoch time so stored timestamps look like real ones. */
export function manualClock(startMs = 1_767_225_600_000): ManualClock {
  let current = startMs;
  return {
    now: () => current,
    advance(ms) {
      current += ms;
    },
    set(ms) {
      current = ms;
    },
  };
}
