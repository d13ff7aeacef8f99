/**
 * Core-only rows in memory: MemoryStore checks per second on one hot key and across 100k keys, heap bytes
 * per bucket, and a flood of 2 million distinct keys through a store bounded at 100k.
 */
import { createLimiter, type Limiter, MemoryStore } from '@tollgate/core';
import { median, percentileOfSorted } from '../stats.js';
import type { FloodResult, MemoryCoreRows } from './core-results.js';

const ALLOW = { limit: 1_000_000_000, window: '1h' } as const;
const SPREAD_KEYS = 100_000;
const HEAP_BUCKETS = 100_000;
const FLOOD_KEYS = 2_000_000;
const FLOOD_MAX_KEYS = 100_000;

export async function memoryRows(checks: number, rounds: number): Promise<MemoryCoreRows> {
  const hot = createLimiter({ store: new MemoryStore(), policies: ALLOW });
  const spread = createLimiter({ store: new MemoryStore({ maxKeys: SPREAD_KEYS }), policies: ALLOW });
  await checksPerSec(hot, 'hot', checks); // warm-up
  await checksPerSec(spread, 'spread', SPREAD_KEYS); // warm-up, and every key stored once
  const hotRuns: number[] = [];
  const spreadRuns: number[] = [];
  const heapRuns: number[] = [];
  for (let round = 0; round < rounds; round++) {
    hotRuns.push(await checksPerSec(hot, 'hot', checks));
    spreadRuns.push(await checksPerSec(spread, 'spread', checks));
    heapRuns.push(await heapBytesPerBucket());
  }
  return {
    hotKeyChecksPerSec: median(hotRuns),
    spreadKeys: SPREAD_KEYS,
    spreadChecksPerSec: median(spreadRuns),
    heapBytesPerBucket: median(heapRuns),
    flood: await flood(),
  };
}

/**
 * `checks` consumes, one after the other. `spread` cycles through 100k keys, each built as a new string
 * per check, as a request's key would be; `hot` reuses one string.
 */
async function checksPerSec(limiter: Limiter, keys: 'hot' | 'spread', checks: number): Promise<number> {
  const started = performance.now();
  let wrong = 0;
  for (let i = 0; i < checks; i++) {
    const decision = await limiter.consume(keys === 'hot' ? 'hot-client' : `client-${i % SPREAD_KEYS}`);
    if (!decision.allowed) wrong++;
  }
  if (wrong > 0) throw new Error(`MemoryStore ${keys}: ${wrong} of ${checks} checks were refused`);
  return checks / ((performance.now() - started) / 1000);
}

/** Heap growth per stored bucket after a full GC (needs --expose-gc), the key strings included. */
async function heapBytesPerBucket(): Promise<number> {
  const gc = globalThis.gc;
  if (gc === undefined) throw new Error('the core bench needs node --expose-gc');
  gc();
  const before = process.memoryUsage().heapUsed;
  const store = new MemoryStore({ maxKeys: HEAP_BUCKETS });
  const limiter = createLimiter({ store, policies: ALLOW });
  for (let i = 0; i < HEAP_BUCKETS; i++) await limiter.consume(`bucket-${i}`);
  gc();
  const grown = process.memoryUsage().heapUsed - before;
  if (store.size !== HEAP_BUCKETS) throw new Error(`expected ${HEAP_BUCKETS} buckets, got ${store.size}`);
  return grown / HEAP_BUCKETS;
}

/** 2M distinct keys, one check each, through MemoryStore({ maxKeys: 100_000 }); every check timed. */
async function flood(): Promise<FloodResult> {
  const store = new MemoryStore({ maxKeys: FLOOD_MAX_KEYS });
  const limiter = createLimiter({ store, policies: { limit: 100, window: '1m' } });
  const waitsUs = new Float64Array(FLOOD_KEYS);
  const started = performance.now();
  for (let i = 0; i < FLOOD_KEYS; i++) {
    const before = performance.now();
    await limiter.consume(`flood-${i}`);
    waitsUs[i] = (performance.now() - before) * 1000;
  }
  const seconds = (performance.now() - started) / 1000;
  waitsUs.sort();
  return {
    keys: FLOOD_KEYS,
    maxKeys: FLOOD_MAX_KEYS,
    checksPerSec: FLOOD_KEYS / seconds,
    p999Us: percentileOfSorted(waitsUs, 99.9),
    maxUs: waitsUs[FLOOD_KEYS - 1] as number,
    sizeAfter: store.size,
  };
}
