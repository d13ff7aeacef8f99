/** Data of the algorithms picture: the same traffic through a token bucket, a fixed and a sliding window. */
import { createLimiter, MemoryStore, type Policy } from '@tollgate/core';
import { arrivalTimesMs } from './traffic.js';
import { virtualClock } from './virtual-clock.js';

/** Requests of one algorithm in one bin of time. */
export interface TrafficBin {
  readonly algorithm: string;
  /** Start of the bin, in seconds from the start of the run. */
  readonly fromSec: number;
  readonly admitted: number;
  readonly refused: number;
}

/** The width of a bin of the picture, in ms. */
export const BIN_MS = 250;

/** The policies compared, by how the picture names them: 10 per second, the token bucket bursting to 20. */
export const ALGORITHM_POLICIES: Readonly<Record<string, Policy>> = {
  'Token bucket (burst 20)': { limit: 10, window: '1s', burst: 20 },
  'Fixed window': { limit: 10, window: '1s', algorithm: 'fixed-window' },
  'Sliding window': { limit: 10, window: '1s', algorithm: 'sliding-window' },
};

/**
 * Sends the traffic of `arrivalTimesMs()` through one limiter per policy, each on a `MemoryStore` whose
 * clock is moved to each request's time, and counts admitted and refused requests per {@link BIN_MS}.
 *
 * @example
 * const bins = await admittedByAlgorithm(); // 3 algorithms × 120 bins
 */
export async function admittedByAlgorithm(): Promise<TrafficBin[]> {
  const bins: TrafficBin[] = [];
  for (const [algorithm, policy] of Object.entries(ALGORITHM_POLICIES)) {
    const clock = virtualClock();
    const limiter = createLimiter({ store: new MemoryStore({ clock: clock.now }), policies: policy });
    const counts = new Map<number, { admitted: number; refused: number }>();
    for (const atMs of arrivalTimesMs()) {
      clock.set(atMs);
      const { allowed } = await limiter.consume('client');
      const bin = Math.floor(atMs / BIN_MS);
      const count = counts.get(bin) ?? { admitted: 0, refused: 0 };
      if (allowed) count.admitted++;
      else count.refused++;
      counts.set(bin, count);
    }
    for (const [bin, count] of counts) bins.push({ algorithm, fromSec: (bin * BIN_MS) / 1000, ...count });
  }
  return bins;
}
