/**
 * Core-only rows on Redis for one hot key (a tenant-wide quota every process checks): `limiter.consume()`
 * with and without token slices (`slice: { size: 100 }`), at 1 and 64 checks in flight. A sliced check
 * asks Redis once per 100 checks, so its rows time 50 times as many checks, for samples about as long
 * as the others'. Variants run interleaved, rounds shuffled; medians.
 */
import { createLimiter, type Limiter, type Policy, RedisStore } from '@tollgate/core';
import type { Redis } from 'ioredis';
import type { RedisCoreRow } from './core-results.js';
import { type CoreVariant, measuredRows } from './redis-rows.js';

/** Never refuses during a run: the rows time admitted checks. */
const HOT = { limit: 1_000_000_000, window: '1h', algorithm: 'fixed-window' } as const satisfies Policy;
const SLICE_SIZE = 100;
/** Sliced rows time this many times the checks of the others. */
const SLICED_CHECKS_FACTOR = 50;

/** What the slice rows run on, and how long. */
export interface SliceRowsSettings {
  /** Tollgate's client (see `connectBenchRedis`), and one for INFO only. */
  readonly client: Redis;
  readonly stats: Redis;
  readonly serialChecks: number;
  readonly concurrentChecks: number;
  readonly rounds: number;
  readonly seed: number;
}

/** The hot-key rows, with and without token slices, as {@link RedisCoreRow}s (medians over the rounds). */
export async function sliceRows(settings: SliceRowsSettings): Promise<RedisCoreRow[]> {
  const { client, serialChecks, concurrentChecks } = settings;
  const store = new RedisStore({ client, prefix: `bench:slices:${settings.seed}:` });
  const plain = createLimiter({ store, policies: HOT, namespace: 'plain' });
  const sliced = createLimiter({
    store,
    policies: { ...HOT, slice: { size: SLICE_SIZE } },
    namespace: 'sliced',
  });
  const hotKey = (limiter: Limiter) => async () => {
    const decision = await limiter.consume('tenant:hot');
    return decision.allowed && !decision.degraded;
  };
  const variants: CoreVariant[] = [1, 64].flatMap((concurrency) => {
    const checks = concurrency === 1 ? serialChecks : concurrentChecks;
    return [
      {
        label: `Tollgate consume() of one hot key, ${concurrency} in flight`,
        concurrency,
        checks,
        check: hotKey(plain),
      },
      {
        label: `Tollgate consume() of one hot key, slice: { size: ${SLICE_SIZE} }, ${concurrency} in flight`,
        concurrency,
        checks: checks * SLICED_CHECKS_FACTOR,
        check: hotKey(sliced),
      },
    ];
  });
  return measuredRows(variants, settings);
}
