/**
 * Token slices on the memory store, under an injected clock: checks spent in process from a slice, exact
 * near the limit, leftovers given back when a slice expires, one take shared by concurrent checks, a
 * bounded map of slices, and the options checked at construction.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { resolvePolicies } from '../../src/algorithms/policies.js';
import { DECISION_CHANNEL, STORE_ERROR_CHANNEL } from '../../src/diagnostics/channels.js';
import { resolveRateLimitOptions } from '../../src/http/options/options.js';
import { createHttpLimiter } from '../../src/http/pipeline/http-limiter.js';
import { createLimiter } from '../../src/limiter/limiter.js';
import { type SliceStore, TokenSlices } from '../../src/limiter/token-slices.js';
import type { Policy } from '../../src/model/policy.js';
import type { BucketRequest, BucketResult, Store } from '../../src/model/store.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { record } from '../diagnostics/record.js';
import { fakeAccess, TEST_ADAPTER } from '../http/fixtures.js';
import { seeded } from '../seeded.js';

const START_MS = 1_700_000_000_000;

/**
 * A memory store on a hand-moved clock that logs each call as `'consume 10'`, `'refund 7'`; with
 * `held`, answers wait until `release()` (a store across a network).
 */
function loggedStore(options: { held?: boolean } = {}) {
  const clock = { nowMs: START_MS };
  const now = () => clock.nowMs;
  const inner = new MemoryStore({ clock: now });
  const calls: string[] = [];
  let waiting: (() => void)[] = [];
  const store: Store = {
    clock: now,
    local: true,
    async update(request: BucketRequest): Promise<BucketResult> {
      calls.push(`${request.mode} ${request.cost}`);
      const result = inner.update(request); // decided now, in the order asked: answered when released
      if (options.held) await new Promise<void>((resolve) => waiting.push(resolve));
      return result;
    },
    reset: (key, policies) => inner.reset(key, policies),
  };
  const release = async () => {
    for (let round = 0; round < 100 && waiting.length > 0; round++) {
      const now = waiting;
      waiting = [];
      for (const resolve of now) resolve();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  /** The store's own count for `owner` of a single policy, read with a peek that is not logged. */
  const count = async (owner: string, policy: Policy) => {
    const result = await inner.update({
      key: owner,
      policies: resolvePolicies(policy),
      cost: 1,
      mode: 'peek',
    });
    return (result.states[0] as number[])[1];
  };
  return { clock, store, calls, release, count };
}

const FIXED = (limit: number, slice?: Policy['slice']): Policy => ({
  limit,
  window: '1m',
  algorithm: 'fixed-window',
  ...(slice === undefined ? {} : { slice }),
});

afterEach(() => {
  vi.useRealTimers();
});

describe('token slices', () => {
  it('spends checks in process from one take of the slice size', async () => {
    const { store, calls } = loggedStore();
    const limiter = createLimiter({ store, policies: FIXED(100, { size: 10 }) });
    const decisions = [];
    for (let i = 0; i < 10; i++) decisions.push(await limiter.consume('tenant'));
    expect(calls).toEqual(['consume 10']);
    expect(decisions.every((d) => d.allowed && !d.degraded)).toBe(true);
    // What the store had left after the take, plus what the slice has not spent.
    expect(decisions.map((d) => d.decidedBy.remaining)).toEqual([99, 98, 97, 96, 95, 94, 93, 92, 91, 90]);
    expect(decisions[9]?.decidedBy.resetMs).toBe(60_000);
    await limiter.consume('tenant');
    expect(calls).toEqual(['consume 10', 'consume 10']);
  });

  it('gives the remaining wait of the window the slice was taken in', async () => {
    const { clock, store } = loggedStore();
    const limiter = createLimiter({ store, policies: FIXED(100, { size: 10, ttl: '30s' }) });
    await limiter.consume('tenant');
    clock.nowMs += 20_000;
    const later = await limiter.consume('tenant');
    expect(later.decidedBy.resetMs).toBe(40_000);
    expect(later.decidedAtMs).toBe(START_MS + 20_000);
  });

  it('is exact near the limit: once a whole slice is refused, each check asks for its cost', async () => {
    const { clock, store, calls, count } = loggedStore();
    const policy = FIXED(25, { size: 10 });
    const limiter = createLimiter({ store, policies: policy });
    const allowed = [];
    for (let i = 0; i < 30; i++) allowed.push((await limiter.consume('tenant')).allowed);
    expect(allowed.filter(Boolean)).toHaveLength(25);
    expect(allowed.slice(25)).toEqual([false, false, false, false, false]);
    expect(await count('/tenant', policy)).toBe(25);
    // Two slices, one refused, then the 5 left one by one; refusals cost one call each.
    expect(calls).toEqual([
      'consume 10',
      'consume 10',
      'consume 10',
      ...Array(5).fill('consume 1'),
      ...Array(5).fill('consume 1'),
    ]);
    clock.nowMs += 60_000; // a new window: the store has whole slices again
    calls.length = 0;
    expect((await limiter.consume('tenant')).allowed).toBe(true);
    expect((await limiter.consume('tenant')).allowed).toBe(true);
    expect(calls).toEqual(['consume 10']);
  });

  it('answers a refused slice from the same call when the cost does not fit either', async () => {
    const { store, calls } = loggedStore();
    const limiter = createLimiter({ store, policies: FIXED(20, { size: 10 }) });
    for (let i = 0; i < 20; i++) await limiter.consume('tenant');
    calls.length = 0;
    const refused = await limiter.consume('tenant');
    expect(refused).toMatchObject({ allowed: false, reason: 'limited', retryAfterMs: 60_000 });
    expect(calls).toEqual(['consume 10']);
  });

  it('takes slices again once an exact answer shows a whole slice left (a token bucket refills)', async () => {
    const { clock, store, calls } = loggedStore();
    const policy = { limit: 20, window: '20s', slice: { size: 10, ttl: '20s' } } as const;
    const limiter = createLimiter({ store, policies: policy });
    for (let i = 0; i < 20; i++) await limiter.consume('tenant');
    expect((await limiter.consume('tenant')).allowed).toBe(false); // the refused slice: exact from now
    calls.length = 0;
    clock.nowMs += 1_500; // a token and a half back: not a whole slice
    expect((await limiter.consume('tenant')).allowed).toBe(true);
    clock.nowMs += 15_000; // 15 more: the exact answer shows it
    await limiter.consume('tenant');
    await limiter.consume('tenant');
    await limiter.consume('tenant');
    expect(calls).toEqual(['consume 1', 'consume 1', 'consume 10']);
  });

  it('gives back what an expired slice left, on the key’s next check', async () => {
    const { clock, store, calls, count } = loggedStore();
    const policy = FIXED(100, { size: 10, ttl: '1s' });
    const limiter = createLimiter({ store, policies: policy });
    for (let i = 0; i < 3; i++) await limiter.consume('tenant');
    clock.nowMs += 1_000;
    await limiter.consume('tenant');
    expect(calls).toEqual(['consume 10', 'refund 7', 'consume 10']);
    expect(await count('/tenant', policy)).toBe(13); // 4 admitted, 9 in the new slice
  });

  it('gives back leftovers of keys no longer checked, by an unref’d sweep every ttl', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { clock, store, calls, count } = loggedStore();
    const policy = FIXED(100, { size: 10, ttl: '2s' });
    const limiter = createLimiter({ store, policies: policy });
    for (let i = 0; i < 3; i++) await limiter.consume('tenant');
    vi.advanceTimersByTime(2_000); // the sweep runs, but the slice is live by the store's clock
    expect(calls).toEqual(['consume 10']);
    clock.nowMs += 2_000;
    vi.advanceTimersByTime(2_000);
    expect(calls).toEqual(['consume 10', 'refund 7']);
    await Promise.resolve();
    expect(await count('/tenant', policy)).toBe(3);
    expect(vi.getTimerCount()).toBe(0); // nothing held: no timer left
  });

  it('shares one take among concurrent checks of a key', async () => {
    const { store, calls, release } = loggedStore({ held: true });
    const limiter = createLimiter({ store, policies: FIXED(1_000, { size: 10 }) });
    const checks = Array.from({ length: 50 }, () => limiter.consume('tenant'));
    await release();
    const decisions = await Promise.all(checks);
    expect(decisions.every((d) => d.allowed)).toBe(true);
    expect(calls).toEqual(Array(5).fill('consume 10'));
  });

  it('admits exactly the limit to concurrent checks that run past it', async () => {
    const { store, release } = loggedStore({ held: true });
    const limiter = createLimiter({ store, policies: FIXED(25, { size: 10 }) });
    const checks = Array.from({ length: 100 }, () => limiter.consume('tenant'));
    await release();
    const decisions = await Promise.all(checks);
    expect(decisions.filter((d) => d.allowed)).toHaveLength(25);
  });

  it('sends a cost larger than the slice straight to the store, and never takes a slice for a peek', async () => {
    const { store, calls } = loggedStore();
    const limiter = createLimiter({ store, policies: FIXED(100, { size: 10 }) });
    expect((await limiter.peek('tenant')).allowed).toBe(true);
    expect((await limiter.consume('tenant', { cost: 15 })).allowed).toBe(true);
    expect(calls).toEqual(['peek 1', 'consume 15']);
    await limiter.consume('tenant');
    const peeked = await limiter.peek('tenant', { cost: 9 }); // the slice holds 9: no call
    expect(peeked).toMatchObject({ allowed: true, cost: 9 });
    expect(peeked.decidedBy.remaining).toBe(84);
    expect(calls).toEqual(['peek 1', 'consume 15', 'consume 10']);
  });

  it('spends variable costs, giving back a leftover too small for the next one before taking', async () => {
    const { store, calls } = loggedStore();
    const limiter = createLimiter({ store, policies: FIXED(100, { size: 10 }) });
    await limiter.consume('tenant', { cost: 4 });
    await limiter.consume('tenant', { cost: 4 });
    await limiter.consume('tenant', { cost: 4 }); // 2 left: given back
    expect(calls).toEqual(['consume 10', 'refund 2', 'consume 10']);
  });

  it('forgets this process’s slice on reset', async () => {
    const { store, calls, count } = loggedStore();
    const policy = FIXED(100, { size: 10 });
    const limiter = createLimiter({ store, policies: policy });
    await limiter.consume('tenant');
    await limiter.reset('tenant');
    expect(await count('/tenant', policy)).toBe(0);
    await limiter.consume('tenant');
    expect(calls).toEqual(['consume 10', 'consume 10']); // nothing given back: the reset took it all
  });

  it('publishes every check on tollgate:decision, those from a slice with no store latency', async () => {
    const decisions = record(DECISION_CHANNEL);
    const { store } = loggedStore();
    const limiter = createLimiter({ store, policies: FIXED(100, { size: 10 }), namespace: 'fleet' });
    for (let i = 0; i < 12; i++) await limiter.consume('tenant');
    expect(decisions).toHaveLength(12);
    expect(decisions.every((e) => e.outcome === 'allowed' && e.limiter === 'fleet')).toBe(true);
    const latencies = decisions.map((e) => e.storeLatencyMs === undefined);
    expect(latencies).toEqual([false, ...Array(9).fill(true), false, true]);
  });

  it('lets the insurance decide when a take fails, publishing one store error per take', async () => {
    const errors = record(STORE_ERROR_CHANNEL);
    const down: Store = {
      async update() {
        await new Promise((resolve) => setImmediate(resolve));
        throw new Error('connection refused');
      },
      async reset() {},
    };
    const limiter = createLimiter({ store: down, policies: FIXED(100, { size: 10 }), denyCache: false });
    const decisions = await Promise.all(Array.from({ length: 5 }, () => limiter.consume('tenant')));
    expect(decisions.every((d) => d.allowed && d.degraded)).toBe(true);
    expect(errors).toHaveLength(1);
    await expect(limiter.consume('tenant', { onStoreError: 'throw' })).rejects.toThrow('connection refused');
  });

  it('gives back the leftover of the key sliced longest ago when the map is full', async () => {
    const { store, calls, count } = loggedStore();
    const policy = FIXED(100, { size: 10 });
    const limiter = createLimiter({ store, policies: policy });
    await limiter.consume('key-0');
    for (let i = 1; i <= 10_000; i++) await limiter.consume(`key-${i}`);
    expect(calls.filter((call) => call.startsWith('refund'))).toEqual(['refund 9']);
    expect(await count('/key-0', policy)).toBe(1);
  });
});

/**
 * `processes` limiters (as many processes) on one store, checking one key of a fixed window of 100 per
 * second with slices of 10 (spent within the window), in a random order on a hand-moved clock. With
 * `bursty`, checks come slowly for a while, then quickly (so a window can end with slices half spent,
 * and the next one spend them), and each process idles at random (so its slice expires, and is given
 * back late, on its next check); with `costs`, a check asks for 1 to 3. Returns the admissions per
 * window, whole windows only (counted as the Redis test of the same bound counts them).
 */
async function simulate(seed: number, { processes = 4, costs = false, bursty = false } = {}) {
  const random = seeded(seed);
  let nowMs = START_MS;
  const store = new MemoryStore({ clock: () => nowMs });
  const policies = {
    limit: 100,
    window: '1s',
    algorithm: 'fixed-window',
    slice: { size: 10, ttl: '1s' },
  } as const;
  const fleet = Array.from({ length: processes }, () => ({
    limiter: createLimiter({ store, policies, namespace: 'fleet' }),
    idleUntilMs: 0,
  }));
  const admittedAtMs: number[] = [];
  const windowEnds = new Set<number>();
  let slowUntilMs = 0;
  let fastUntilMs = 0;
  while (nowMs < START_MS + 30_000) {
    if (bursty && nowMs >= slowUntilMs && nowMs >= fastUntilMs) {
      slowUntilMs = nowMs + 200 + Math.floor(random() * 900);
      fastUntilMs = slowUntilMs + 100 + Math.floor(random() * 900);
    }
    nowMs += Math.floor(random() * (bursty && nowMs < slowUntilMs ? 60 : 3));
    const process = fleet[Math.floor(random() * processes)] as (typeof fleet)[number];
    if (process.idleUntilMs > nowMs) continue;
    if (bursty && random() < 0.01) process.idleUntilMs = nowMs + 100 + Math.floor(random() * 1_500);
    const cost = costs ? 1 + Math.floor(random() * 3) : 1;
    const decision = await process.limiter.consume('tenant', { cost });
    if (!decision.allowed) continue;
    for (let i = 0; i < cost; i++) admittedAtMs.push(decision.decidedAtMs);
    if (decision.decidedBy.resetMs > 0) windowEnds.add(decision.decidedAtMs + decision.decidedBy.resetMs);
  }
  const ends = [...windowEnds].sort((a, b) => a - b);
  const counts = ends.map(() => 0);
  for (const atMs of admittedAtMs) {
    const window = ends.findIndex((end) => atMs < end);
    if (window !== -1) counts[window] = (counts[window] ?? 0) + 1;
  }
  return counts.slice(1, -1);
}

describe('the bound of token slices, 4 processes simulated on one store', () => {
  const slack = 4 * (10 - 1);

  const most: number[] = [];
  it.each([1, 2, 3, 4, 5, 6])('admits at most limit + 4 × (size − 1) per window (seed %i)', async (seed) => {
    const counts = await simulate(seed, { costs: true, bursty: true });
    expect(counts.length).toBeGreaterThan(5);
    expect(Math.max(...counts)).toBeLessThanOrEqual(100 + slack);
    most.push(Math.max(...counts));
  });

  // A leftover given back after its window has ended no longer carries over (it is dropped), so not
  // every schedule goes past the limit; spending a slice after its window has ended still may.
  it('is checked by schedules that do carry tokens across windows', () => {
    expect(Math.max(...most)).toBeGreaterThan(100);
  });

  it.each([1, 2, 3])(
    'admits at least limit − 4 × (size − 1) per window while all keep asking (seed %i)',
    async (seed) => {
      const counts = await simulate(seed);
      expect(counts.length).toBeGreaterThan(5);
      expect(Math.min(...counts)).toBeGreaterThanOrEqual(100 - slack);
    },
  );
});

describe('TokenSlices', () => {
  it('holds at most maxKeys slices, and none once they expire', async () => {
    let nowMs = 0;
    const given: string[] = [];
    const inner = new MemoryStore({ clock: () => nowMs });
    const policies = resolvePolicies(FIXED(100, { size: 5 }));
    const sliceStore: SliceStore = {
      take: (owner, size) => inner.update({ key: owner, policies, cost: size, mode: 'consume' }),
      giveBack: (owner, tokens) => given.push(`${owner} ${tokens}`),
      callStarts: () => Number.NaN,
    };
    const slices = new TokenSlices(policies, { size: 5, ttlMs: 1_000 }, sliceStore, () => nowMs, 3);
    for (const owner of ['a', 'b', 'c', 'd', 'e']) await slices.take(owner, 1);
    expect(slices.keys).toBe(3);
    expect(given).toEqual(['a 4', 'b 4']);
    nowMs += 1_000;
    slices.sweep();
    expect(slices.keys).toBe(0);
    expect(given).toEqual(['a 4', 'b 4', 'c 4', 'd 4', 'e 4']);
  });
});

describe('token slice options', () => {
  it.each<[string, Policy | Policy[], RegExp]>([
    [
      'a size of 1',
      FIXED(100, { size: 1 }),
      /policy\.slice\.size must be a whole number from 2 to the policy's capacity \(100\); got 1/,
    ],
    ['a fractional size', FIXED(100, { size: 2.5 }), /policy\.slice\.size must be a whole number/],
    [
      'a size above the capacity',
      FIXED(100, { size: 101 }),
      /policy\.slice\.size .*capacity \(100\); got 101/,
    ],
    ['a size as a string', FIXED(100, { size: '10' as never }), /policy\.slice\.size .*got '10'/],
    ['no size', FIXED(100, {} as never), /policy\.slice\.size .*got undefined/],
    [
      'a ttl beyond the window',
      FIXED(100, { size: 10, ttl: '2m' }),
      /policy\.slice\.ttl must be at most the policy's window \(1m\); got 2m/,
    ],
    ['a ttl that is no duration', FIXED(100, { size: 10, ttl: 'soon' as never }), /policy\.slice\.ttl/],
    ['a ttl of 0', FIXED(100, { size: 10, ttl: 0 }), /policy\.slice\.ttl must be/],
    ['an unknown field', FIXED(100, { size: 10, maxKeys: 5 } as never), /policy\.slice has an unknown field/],
    [
      'a slice that is no object',
      FIXED(100, 10 as never),
      /policy\.slice must be an object like \{ size: 100 \}/,
    ],
    [
      'a sliced policy beside another',
      [FIXED(100, { size: 10 }), { limit: 10, window: '1s', name: 'burst' }],
      /policies\[0\]\.slice: a limiter with a sliced policy must have that one policy only/,
    ],
  ])('refuses %s with a TypeError naming the field', (_name, policies, message) => {
    expect(() => createLimiter({ policies })).toThrow(TypeError);
    expect(() => createLimiter({ policies })).toThrow(message);
  });

  it.each([
    ['ban', { ban: { after: 3, duration: '1m' } }],
    ['exponentialBackoff', { exponentialBackoff: true }],
    ['continueExceeding', { continueExceeding: true }],
  ])('refuses a slice with %s', (name, options) => {
    expect(() => createLimiter({ policies: FIXED(100, { size: 10 }), ...options })).toThrow(
      new RegExp(`policy\\.slice cannot be combined with ${name}`),
    );
  });

  it('defaults the ttl to 1s, or the window when shorter', () => {
    expect(resolvePolicies(FIXED(100, { size: 10 }))[0]?.slice).toEqual({ size: 10, ttlMs: 1_000 });
    const short = resolvePolicies({ limit: 10, window: '200ms', slice: { size: 2 } });
    expect(short[0]?.slice).toEqual({ size: 2, ttlMs: 200 });
  });

  it('keeps the buckets a policy without slices had: the stored key does not change', async () => {
    const store = new MemoryStore({ clock: () => START_MS });
    const plain = createLimiter({ store, policies: FIXED(100) });
    await plain.consume('tenant', { cost: 30 });
    const sliced = createLimiter({ store, policies: FIXED(100, { size: 10 }) });
    expect((await sliced.consume('tenant')).decidedBy.remaining).toBe(69); // 100 − 30 − 10 + 9 unspent
  });

  it('limits HTTP requests with a sliced policy given as policies', async () => {
    const { store, calls } = loggedStore();
    const policies = { limit: 3, window: '1m', algorithm: 'fixed-window', slice: { size: 2 } } as const;
    const limiter = createHttpLimiter(
      { policies, store, key: () => 'tenant:acme' },
      fakeAccess,
      TEST_ADAPTER,
    );
    const kinds = [];
    for (let i = 0; i < 4; i++) kinds.push((await limiter.check({ ip: `203.0.113.${i}` })).kind);
    expect(kinds).toEqual(['allowed', 'allowed', 'allowed', 'limited']);
    expect(calls).toEqual(['consume 2', 'consume 2', 'consume 1', 'consume 1']);
  });

  it('passes through the HTTP options, checked with the adapter named', () => {
    const settings = TEST_ADAPTER;
    const resolved = resolveRateLimitOptions({ policies: FIXED(20_000, { size: 100 }) }, settings);
    expect(resolved.policies?.[0]).toMatchObject({ slice: { size: 100 } });
    expect(() => resolveRateLimitOptions({ policies: FIXED(20_000, { size: 0 }) }, settings)).toThrow(
      /@tollgate\/test: policy\.slice\.size must be a whole number/,
    );
  });
});
