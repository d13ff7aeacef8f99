/**
 * What the differential suites share: the policy sets they run, the one clock both stores read, and
 * what two decisions must agree on.
 */
import type { Decision, Policy } from '@tollgate/core';

export const POLICY_SETS: Record<string, Policy | Policy[]> = {
  'token bucket': { limit: 10, window: '1s', burst: 15 },
  'fixed window': { limit: 5, window: '2s', algorithm: 'fixed-window' },
  'sliding window': { limit: 8, window: '1s', algorithm: 'sliding-window' },
  'two token buckets': [
    { limit: 10, window: '1s', burst: 15, name: 'second' },
    { limit: 40, window: '10s', burst: 10, name: 'tens' },
  ],
  // Limits that each bind now and then, at the rate the suites' operations come.
  'a token bucket and a fixed window': [
    { limit: 2, window: '1s', burst: 5, name: 'second' },
    { limit: 6, window: '10s', name: 'tens', algorithm: 'fixed-window' },
  ],
  'a fixed window and a sliding window': [
    { limit: 3, window: '2s', name: 'two', algorithm: 'fixed-window' },
    { limit: 8, window: '5s', name: 'five', algorithm: 'sliding-window' },
  ],
  'a sliding window and a fixed window': [
    { limit: 4, window: '1s', name: 'second', algorithm: 'sliding-window' },
    { limit: 6, window: '10s', name: 'tens', algorithm: 'fixed-window' },
  ],
  'three policies': [
    { limit: 10, window: '1s', name: 'second' },
    { limit: 30, window: '10s', name: 'tens', algorithm: 'fixed-window' },
    { limit: 40, window: '5s', name: 'sliding', algorithm: 'sliding-window' },
  ],
};

/**
 * One clock for both stores, moved before each operation the two make, and always ahead of this
 * process's own by more than the time an operation takes: Redis forgets a key by the real clock, so the
 * test clock must reach a key's end no later than Redis does (then the memory store forgets it no later,
 * and a key either store forgot is as good as fresh). Both stores see one ms in each operation.
 */
export class SharedClock {
  #aheadMs = 0;
  #nowMs = Date.now();
  readonly now = (): number => this.#nowMs;
  /** Moves the clock `advanceMs`, and at least `OPERATION_MS` more than the real clock moved. */
  step(advanceMs: number): void {
    this.#aheadMs += advanceMs + OPERATION_MS;
    this.#nowMs = Math.max(this.#nowMs, Date.now() + this.#aheadMs);
  }
}

/** More than one operation (or one wave) of both stores takes on a loaded machine, in ms. */
const OPERATION_MS = 50;

/** What two decisions must agree on: all of it. */
export function comparable(decision: Decision): unknown {
  return JSON.parse(JSON.stringify(decision));
}
