/**
 * Core-only rows on Redis for waiting calls (`consume(key, { maxWait })`, what `delay` runs for each HTTP
 * request) on one hot key: one that waits for its turn, beside one refused at once because its turn is
 * past `maxWait`, at 64 in flight, to read beside the plain hot-key rows. The waited row's sleep returns at once: it measures what waiting costs Node and
 * Redis, not the time waited. Variants run interleaved, rounds shuffled; medians.
 */
import { createLimiter, type Limiter, RedisStore } from '@tollgate/core';
import type { Redis } from 'ioredis';
import type { RedisCoreRow } from './core-results.js';
import { type CoreVariant, measuredRows } from './redis-rows.js';

/** A token every 100 ms. */
const PACE = { limit: 10, window: '1s', burst: 1 } as const;
const TOKEN_MS = 100;
/**
 * The turns owed when the waited row starts. Each check moves the store's clock on by one token, so the
 * debt stays about this deep and every check waits, whatever order 64 checks in flight reach Redis in.
 * Deep enough that the key, whose expiry in Redis runs on real time, outlives the other rows' samples.
 */
const DEBT_TOKENS = 1_000;
/** A wait of DEBT_TOKENS turns (100 s) fits; the refused row's 2.4 hours do not. */
const MAX_WAIT = '5m';
/** 10 a day: once spent, the next turn is 2.4 hours away. */
const SPENT = { limit: 10, window: '1d' } as const;

/** What the wait rows run on, and how long. */
export interface WaitRowsSettings {
  /** Tollgate's client (see `connectBenchRedis`), and one for INFO only. */
  readonly client: Redis;
  readonly stats: Redis;
  readonly concurrentChecks: number;
  readonly rounds: number;
  readonly seed: number;
}

/** A waited call beside a refused one, as {@link RedisCoreRow}s (medians over the rounds). */
export async function waitRows(settings: WaitRowsSettings): Promise<RedisCoreRow[]> {
  const { client, concurrentChecks } = settings;
  const prefix = `bench:waits:${settings.seed}:`;
  // The waited row's store runs on a clock of its own, moved one token per check.
  let virtualMs = Date.now();
  const paced = createLimiter({
    store: new RedisStore({ client, prefix, clock: () => virtualMs }),
    policies: PACE,
    namespace: 'paced',
    sleep: () => Promise.resolve(),
  });
  const spent = createLimiter({
    store: new RedisStore({ client, prefix }),
    policies: SPENT,
    namespace: 'spent',
  });
  await paced.penalty('turns', DEBT_TOKENS);
  for (let i = 0; i < SPENT.limit; i++) await spent.consume('over');

  const waited = async () => {
    virtualMs += TOKEN_MS;
    const decision = await paced.consume('turns', { maxWait: MAX_WAIT });
    return decision.allowed && (decision.waitedMs ?? 0) > 0 && !decision.degraded;
  };
  const refused = (limiter: Limiter) => async () => {
    const decision = await limiter.consume('over', { maxWait: MAX_WAIT });
    return !decision.allowed && decision.reason === 'limited' && !decision.degraded;
  };
  const variants: CoreVariant[] = [
    {
      label: 'Tollgate consume({ maxWait }) of one hot key, waiting its turn, 64 in flight',
      concurrency: 64,
      checks: concurrentChecks,
      check: waited,
    },
    {
      label: 'Tollgate consume({ maxWait }) of one hot key, refused past maxWait, 64 in flight',
      concurrency: 64,
      checks: concurrentChecks,
      check: refused(spent),
    },
  ];
  return measuredRows(variants, settings);
}
