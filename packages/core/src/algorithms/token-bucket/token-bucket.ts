/**
 * Token-bucket maths in TypeScript: the reference that the Lua script in `token-bucket.lua.ts` mirrors
 * line for line. The memory store runs this; the Redis store runs the Lua. Keep the two in step.
 */
import type { ResolvedPolicy } from '../../policy.js';
import type { BucketMode } from '../../store.js';

/**
 * The stored buckets of one key, one per policy. A missing state is all buckets full. One timestamp
 * serves every policy: their levels are always written together.
 */
export interface BucketsState {
  /** When the levels were true, in ms since the epoch. */
  readonly atMs: number;
  /** Each policy's tokens, in units (see {@link ResolvedPolicy}), in policy order. */
  readonly levelUnits: readonly number[];
}

/** What to store after an operation: this state for `ttlMs`, or nothing (`null`: every bucket is full). */
export type BucketsWrite = { readonly state: BucketsState; readonly ttlMs: number } | null;

/** The outcome of {@link settleBuckets}: the decision, the levels, and what to write (if anything). */
export interface SettledBuckets {
  readonly applied: boolean;
  readonly levelUnits: number[];
  /** `undefined` when nothing changed and nothing is to be written. */
  readonly write: BucketsWrite | undefined;
}

/**
 * Decides one operation on a key's buckets at `nowMs`. Pure: the caller reads the state before and
 * stores `write` after, with nothing in between.
 */
export function settleBuckets(
  policies: readonly ResolvedPolicy[],
  state: BucketsState | undefined,
  cost: number,
  mode: BucketMode,
  nowMs: number,
): SettledBuckets {
  const count = policies.length;
  const levelUnits = new Array<number>(count);
  // A clock that stepped back keeps the stored time, so no millisecond of refill is counted twice.
  const atMs = state === undefined ? nowMs : Math.max(nowMs, state.atMs);
  const elapsedMs = state === undefined ? 0 : Math.max(0, nowMs - state.atMs);
  let enough = true;
  for (let i = 0; i < count; i++) {
    const policy = policies[i] as ResolvedPolicy;
    const stored = state === undefined ? policy.capacityUnits : (state.levelUnits[i] as number);
    const level = Math.min(policy.capacityUnits, stored + elapsedMs * policy.limit);
    levelUnits[i] = level;
    if (level < cost * policy.windowMs) enough = false;
  }
  if (mode === 'peek' || (mode === 'consume' && !enough))
    return { applied: enough, levelUnits, write: undefined };

  const sign = mode === 'consume' ? -1 : 1;
  let untilFullMs = 0;
  for (let i = 0; i < count; i++) {
    const policy = policies[i] as ResolvedPolicy;
    const level = Math.min(policy.capacityUnits, (levelUnits[i] as number) + sign * cost * policy.windowMs);
    levelUnits[i] = level;
    untilFullMs = Math.max(untilFullMs, Math.ceil((policy.capacityUnits - level) / policy.limit));
  }
  // Full buckets carry no information. Otherwise the state matters until the slowest bucket is full.
  if (untilFullMs === 0) return { applied: true, levelUnits, write: null };
  return {
    applied: true,
    levelUnits,
    write: { state: { atMs, levelUnits }, ttlMs: atMs - nowMs + untilFullMs },
  };
}
