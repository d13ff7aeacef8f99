/**
 * Token-bucket maths in TypeScript: the reference that the Lua script in `token-bucket.lua.ts` mirrors
 * line for line. The memory store runs this; the Redis store runs the Lua. Keep the two in step.
 */
import type { ResolvedPolicy } from './policy.js';
import type { BucketMode } from './store.js';

/** A stored bucket. A missing bucket is a full one. */
export interface BucketState {
  /** Tokens in the bucket, in units (see {@link ResolvedPolicy}). */
  readonly levelUnits: number;
  /** When `levelUnits` was true, in ms since the epoch. */
  readonly atMs: number;
}

/** What to do with one bucket after an operation: keep this state for `ttlMs`, or forget it (full). */
export type BucketWrite = { readonly state: BucketState; readonly ttlMs: number } | null;

/** The outcome of {@link settleBuckets}: the decision, the levels, and what to write (if anything). */
export interface SettledBuckets {
  readonly applied: boolean;
  readonly levelUnits: number[];
  /** One entry per policy when the buckets changed; `undefined` when nothing is to be written. */
  readonly writes: BucketWrite[] | undefined;
}

/**
 * Decides one operation on a key's buckets at `nowMs`. Pure: the caller reads the states before and
 * writes `writes` after, with nothing in between.
 */
export function settleBuckets(
  policies: readonly ResolvedPolicy[],
  states: readonly (BucketState | undefined)[],
  cost: number,
  mode: BucketMode,
  nowMs: number,
): SettledBuckets {
  const refilled = policies.map((policy, i) => refill(policy, states[i], nowMs));
  const levelUnits = refilled.map((state) => state.levelUnits);
  const enough = policies.every((policy, i) => (levelUnits[i] as number) >= cost * policy.windowMs);
  if (mode === 'peek' || (mode === 'consume' && !enough))
    return { applied: enough, levelUnits, writes: undefined };

  const sign = mode === 'consume' ? -1 : 1;
  const writes = policies.map((policy, i) => {
    const { atMs } = refilled[i] as BucketState;
    const level = Math.min(policy.capacityUnits, (levelUnits[i] as number) + sign * cost * policy.windowMs);
    levelUnits[i] = level;
    if (level >= policy.capacityUnits) return null;
    // The bucket is full again after this long; past that, forgetting it changes nothing.
    const ttlMs = atMs - nowMs + Math.ceil((policy.capacityUnits - level) / policy.limit);
    return { state: { levelUnits: level, atMs }, ttlMs };
  });
  return { applied: true, levelUnits, writes };
}

/**
 * The bucket refilled up to `nowMs`. If the clock stepped back, the stored time is kept: counting the
 * same milliseconds of refill twice would admit more than the policy allows.
 */
function refill(policy: ResolvedPolicy, state: BucketState | undefined, nowMs: number): BucketState {
  if (state === undefined) return { levelUnits: policy.capacityUnits, atMs: nowMs };
  const elapsedMs = Math.max(0, nowMs - state.atMs);
  return {
    levelUnits: Math.min(policy.capacityUnits, state.levelUnits + elapsedMs * policy.limit),
    atMs: Math.max(nowMs, state.atMs),
  };
}
