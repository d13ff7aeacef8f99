/**
 * Tollgate's rows: `createLimiter` with a `RedisStore` over ioredis (`@tollgate/core` from the
 * workspace), one configuration per driver, limits so high that no check is refused. Every check finds
 * its client's key as the check before left it, as an active client's key is found.
 */
import { createLimiter, type Limiter, type LimiterOptions, type Policy, RedisStore } from '@tollgate/core';
import type { CostDriver, FloorName, OpenedDriver, Shape } from './cost-types.js';
import { ALL_SHAPES, HOT_SHAPES } from './shapes.js';

const HIGH = 1e9;
/**
 * A bucket of 10⁹ tokens refilled at one an hour: it is never full again within a row, so its key (kept
 * until the bucket is full) is always there for the next check. A bucket refilled at 10⁹ a minute is
 * full again nanoseconds after each check, and its key gone a millisecond later: each check would write
 * it anew, a cheaper path than an active client's, taken or not by how long the check before took.
 */
const BUCKET = { limit: 1, window: '1h', burst: HIGH } as const satisfies Policy;
const PER_MINUTE = { limit: HIGH, window: '1m' } as const satisfies Policy;
/**
 * The sliding window's windows are aligned to the epoch: hour-long ones, so that a row (seconds long)
 * seldom sees one end, which would send some of its checks down another path.
 */
const PER_HOUR = { limit: HIGH, window: '1h' } as const satisfies Policy;
/** An override in force: a bucket twice as large, refilled twice as fast. */
const OVERRIDE = { limit: 2 * BUCKET.limit, burst: 2 * HIGH } as const;
/** A slice's default ttl is 1 s; its leftover goes back by a sweep at most a ttl later. */
const SLICE_SWEPT_MS = 2200;

/** One configuration of Tollgate's limiter. */
interface TollgateConfig {
  readonly label: string;
  readonly floor: FloorName;
  readonly shapes: readonly Shape[];
  readonly options: Omit<LimiterOptions, 'store'>;
  /** What the row needs stored before its checks. */
  readonly prepare?: (limiter: Limiter, owners: readonly string[]) => Promise<void>;
  /** How long the row's timers may still send after its last check. */
  readonly settleMs?: number;
}

const CONFIGS: readonly TollgateConfig[] = [
  {
    label: 'Tollgate, token bucket',
    floor: 'TIME, GET, SET PX',
    shapes: ALL_SHAPES,
    options: { policies: BUCKET },
  },
  {
    label: 'Tollgate, fixed window',
    floor: 'INCR, PEXPIRE',
    shapes: ALL_SHAPES,
    options: { policies: { ...PER_MINUTE, algorithm: 'fixed-window' } },
  },
  {
    label: 'Tollgate, sliding window',
    floor: 'TIME, GET, SET PX',
    shapes: ALL_SHAPES,
    options: { policies: { ...PER_HOUR, algorithm: 'sliding-window' } },
  },
  {
    label: 'Tollgate, two policies on one key (token bucket + fixed window per hour)',
    floor: 'TIME, GET, SET PX',
    shapes: ALL_SHAPES,
    options: {
      policies: [
        { ...BUCKET, name: 'bucket' },
        { ...PER_HOUR, algorithm: 'fixed-window', name: 'hourly' },
      ],
    },
  },
  {
    label: "Tollgate, token bucket, ban: { after: 5, duration: '1m' }",
    floor: 'TIME, GET, SET PX',
    shapes: ALL_SHAPES,
    options: { policies: BUCKET, ban: { after: 5, duration: '1m' } },
  },
  {
    label: 'Tollgate, token bucket, an override in force',
    floor: 'TIME, GET, SET PX',
    shapes: ALL_SHAPES,
    options: { policies: BUCKET, overrides: true },
    prepare: async (limiter, owners) => {
      for (const owner of owners) await limiter.setOverride(owner, OVERRIDE);
    },
  },
  {
    // Slices are for hot keys: on distinct keys each would be taken for one check and given back.
    label: 'Tollgate, token bucket, slice: { size: 10 }',
    floor: 'TIME, GET, SET PX',
    shapes: HOT_SHAPES,
    options: { policies: { ...BUCKET, slice: { size: 10 } } },
    settleMs: SLICE_SWEPT_MS,
  },
];

/** Tollgate's drivers, on `clients.tollgate`. */
export function tollgateDrivers(): CostDriver[] {
  return CONFIGS.map((config) => ({
    label: config.label,
    family: 'tollgate',
    floor: config.floor,
    shapes: config.shapes,
    async open(clients, owners): Promise<OpenedDriver> {
      const store = new RedisStore({ client: clients.tollgate });
      // Redis under valgrind runs tens of times slower: a batch may take seconds on a busy machine, past
      // the default 1 s timeout. The deadline sent is a number of the same digits either way.
      const limiter = createLimiter({ ...config.options, store, timeout: 30_000 });
      await config.prepare?.(limiter, owners);
      const { settleMs } = config;
      return {
        check: async (owner) => {
          const decision = await limiter.consume(owner);
          return decision.allowed && !decision.degraded;
        },
        ...(settleMs === undefined
          ? {}
          : { close: () => new Promise<void>((resolve) => setTimeout(resolve, settleMs)) }),
      };
    },
  }));
}
