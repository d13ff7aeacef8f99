/**
 * The shapes a row's checks come in (1 or 64 in flight, 1,000 keys or one hot key), and the driving of
 * checks in a shape: in waves, so that each run sends Redis the same calls in the same groups.
 */
import type { Check, Shape } from './cost-types.js';

const DISTINCT_KEYS = 1000;
const WAVE = 64;

/** 1 in flight on 1,000 distinct keys: each check awaited before the next. */
export const ONE_BY_ONE: Shape = { label: '1 in flight, 1,000 keys', inFlight: 1, keys: DISTINCT_KEYS };
/** 64 in flight on distinct keys: 64 checks started at once, then the next 64. */
export const WAVES: Shape = { label: '64 in flight, 1,000 keys', inFlight: WAVE, keys: DISTINCT_KEYS };
/** One hot key, 1 in flight. */
export const HOT_ONE_BY_ONE: Shape = { label: '1 in flight, one hot key', inFlight: 1, keys: 1 };
/** One hot key, 64 in flight. */
export const HOT_WAVES: Shape = { label: '64 in flight, one hot key', inFlight: WAVE, keys: 1 };

export const ALL_SHAPES: readonly Shape[] = [ONE_BY_ONE, WAVES, HOT_ONE_BY_ONE, HOT_WAVES];
export const HOT_SHAPES: readonly Shape[] = [HOT_ONE_BY_ONE, HOT_WAVES];

/** The client ids a shape's checks cycle through. */
export function ownersOf(shape: Shape): string[] {
  if (shape.keys === 1) return ['tenant-hot'];
  return Array.from({ length: shape.keys }, (_, i) => `client-${String(i).padStart(4, '0')}`);
}

/**
 * Checks before the counter is zeroed: every key once (scripts loaded, keys written, the client's setup
 * questions asked), or two waves of a hot key.
 */
export function warmUpChecks(shape: Shape): number {
  return shape.keys === 1 ? 2 * WAVE : shape.keys;
}

/**
 * Runs `count` checks, `shape.inFlight` at a time, check `i` on `owners[i % owners.length]`; resolves to
 * how many were refused.
 */
export async function drive(
  check: Check,
  owners: readonly string[],
  shape: Shape,
  count: number,
): Promise<number> {
  let refused = 0;
  for (let first = 0; first < count; first += shape.inFlight) {
    const wave: Promise<boolean>[] = [];
    for (let i = first; i < Math.min(count, first + shape.inFlight); i++) {
      wave.push(check(owners[i % owners.length] as string));
    }
    for (const allowed of await Promise.all(wave)) if (!allowed) refused++;
  }
  return refused;
}
