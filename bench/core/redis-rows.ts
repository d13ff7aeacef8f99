/**
 * Core-only rows on Redis: `limiter.consume()` of Tollgate's RedisStore against rate-limiter-flexible's
 * `RateLimiterRedis.consume()`, at 1 and 64 checks in flight, and on a key over its limit (where
 * Tollgate's deny cache answers without Redis). Variants run interleaved, rounds shuffled; medians.
 */
import { createLimiter, type Limiter, RedisStore } from '@tollgate/core';
import type { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { countersBetween, redisCounters } from '../redis-stats.js';
import { median, seededRandom, shuffled } from '../stats.js';
import type { RedisCoreRow } from './core-results.js';

/** A check of one variant; resolves to whether it got the answer its row expects. */
export type Check = (i: number) => Promise<boolean>;

/** A row: its label, and the checks it times. */
export interface CoreVariant {
  readonly label: string;
  readonly concurrency: number;
  readonly checks: number;
  readonly check: Check;
}

const ALLOW = { limit: 1_000_000_000, windowSec: 3600 };
const DENY = { limit: 10, windowSec: 86_400 };
/** Allowed checks cycle through this many keys. */
const KEYS = 1000;

export interface RedisRowsSettings {
  /** Tollgate's client, and rate-limiter-flexible's (see `connectBenchRedis`). */
  readonly client: Redis;
  readonly peerClient: Redis;
  readonly stats: Redis;
  readonly serialChecks: number;
  readonly concurrentChecks: number;
  readonly rounds: number;
  readonly seed: number;
}

export async function redisRows(settings: RedisRowsSettings): Promise<RedisCoreRow[]> {
  return measuredRows(await makeVariants(settings), settings);
}

/** Times each variant `rounds` times, interleaved in a shuffled order after a warm-up; medians. */
export async function measuredRows(
  variants: readonly CoreVariant[],
  settings: { readonly stats: Redis; readonly rounds: number; readonly seed: number },
): Promise<RedisCoreRow[]> {
  const samples = new Map<CoreVariant, RedisCoreRow[]>(variants.map((v) => [v, []]));
  const random = seededRandom(settings.seed);
  for (const variant of variants) await sample(variant, settings.stats, Math.min(variant.checks, 2000)); // warm-up
  for (let round = 0; round < settings.rounds; round++) {
    for (const variant of shuffled(variants, random)) {
      samples.get(variant)?.push(await sample(variant, settings.stats, variant.checks));
    }
  }
  return variants.map((variant) => medianRow(variant.label, samples.get(variant) ?? []));
}

async function makeVariants(settings: RedisRowsSettings): Promise<CoreVariant[]> {
  const { client, peerClient, serialChecks, concurrentChecks } = settings;
  const prefix = `bench:core:${settings.seed}:`;
  const tollgate = (policy: { limit: number; windowSec: number }) =>
    createLimiter({
      store: new RedisStore({ client, prefix }),
      policies: { limit: policy.limit, window: policy.windowSec * 1000 },
    });
  const flexible = (policy: { limit: number; windowSec: number }, name: string) =>
    new RateLimiterRedis({
      storeClient: peerClient,
      keyPrefix: `${prefix}rlf-${name}`,
      points: policy.limit,
      duration: policy.windowSec,
    });
  const allowT = tollgate(ALLOW);
  const allowF = flexible(ALLOW, 'allow');
  const denyT = tollgate(DENY);
  const denyF = flexible(DENY, 'deny');
  for (let i = 0; i <= DENY.limit; i++) {
    await denyT.consume('over');
    await denyF.consume('over').catch(() => undefined);
  }
  const byTollgate = (limiter: Limiter, allowed: boolean): Check => {
    return async (i) => {
      const decision = await limiter.consume(allowed ? `client-${i % KEYS}` : 'over');
      return decision.allowed === allowed && decision.degraded !== true;
    };
  };
  const byFlexible = (limiter: RateLimiterRedis, allowed: boolean): Check => {
    return (i) =>
      limiter.consume(allowed ? `client-${i % KEYS}` : 'over').then(
        () => allowed,
        (rejection: unknown) => !allowed && !(rejection instanceof Error),
      );
  };
  return [
    {
      label: 'Tollgate consume(), 1 in flight',
      concurrency: 1,
      checks: serialChecks,
      check: byTollgate(allowT, true),
    },
    {
      label: 'rate-limiter-flexible consume(), 1 in flight',
      concurrency: 1,
      checks: serialChecks,
      check: byFlexible(allowF, true),
    },
    {
      label: 'Tollgate consume(), 64 in flight',
      concurrency: 64,
      checks: concurrentChecks,
      check: byTollgate(allowT, true),
    },
    {
      label: 'rate-limiter-flexible consume(), 64 in flight',
      concurrency: 64,
      checks: concurrentChecks,
      check: byFlexible(allowF, true),
    },
    {
      label: 'Tollgate consume() of a denied key, 64 in flight',
      concurrency: 64,
      checks: concurrentChecks,
      check: byTollgate(denyT, false),
    },
    {
      label: 'rate-limiter-flexible consume() of a denied key, 64 in flight',
      concurrency: 64,
      checks: concurrentChecks,
      check: byFlexible(denyF, false),
    },
  ];
}

/** Runs `checks` checks, `concurrency` in flight; fails if any got the wrong answer. */
async function sample(variant: CoreVariant, stats: Redis, checks: number): Promise<RedisCoreRow> {
  const redisBefore = await redisCounters(stats);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  let next = 0;
  let wrong = 0;
  await Promise.all(
    Array.from({ length: variant.concurrency }, async () => {
      while (next < checks) if (!(await variant.check(next++))) wrong++;
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const redis = countersBetween(redisBefore, await redisCounters(stats));
  if (wrong > 0) throw new Error(`${variant.label}: ${wrong} of ${checks} checks got the wrong answer`);
  return {
    label: variant.label,
    checksPerSec: checks / seconds,
    nodeUsPerCheck: (cpu.user + cpu.system) / checks,
    redisUsPerCheck: redis.cpuUs / checks,
    commandsPerCheck: redis.commands / checks,
    scriptCallsPerCheck: redis.scriptCalls / checks,
    readsPerCheck: redis.reads / checks,
  };
}

function medianRow(label: string, rows: readonly RedisCoreRow[]): RedisCoreRow {
  const of = (pick: (row: RedisCoreRow) => number) => median(rows.map(pick));
  return {
    label,
    checksPerSec: of((r) => r.checksPerSec),
    nodeUsPerCheck: of((r) => r.nodeUsPerCheck),
    redisUsPerCheck: of((r) => r.redisUsPerCheck),
    commandsPerCheck: of((r) => r.commandsPerCheck),
    scriptCallsPerCheck: of((r) => r.scriptCallsPerCheck),
    readsPerCheck: of((r) => r.readsPerCheck),
  };
}
