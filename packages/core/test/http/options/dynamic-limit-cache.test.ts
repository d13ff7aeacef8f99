/**
 * A `limit` function returning many distinct limits (per customer, from a database) keeps a bounded
 * number of limiters: the heap stops growing, and a limiter let go loses no bucket, ban or reset.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { RateLimitOptions } from '../../../src/http/options/option-types.js';
import { resolveRateLimitOptions } from '../../../src/http/options/options.js';
import {
  BOUND_LIMITERS_KEPT,
  type BoundLimiters,
  boundLimiters,
} from '../../../src/http/pipeline/policy-limiters.js';
import { type FakeRequest, storeOnClock, TEST_ADAPTER } from '../fixtures.js';

/** A request whose customer's limit the app looked up. */
type PlanRequest = FakeRequest & { readonly limit: number };

const CLIENT: FakeRequest = { ip: '203.0.113.7' };
const KEY = 'ip:203.0.113.7';

/** The limiters of an HTTP limiter whose limit is the request's, over a memory store on a hand-moved clock. */
function perCustomer(options: RateLimitOptions<PlanRequest> = {}) {
  const { clock, store } = storeOnClock();
  const config = resolveRateLimitOptions<PlanRequest>(
    { limit: (request) => request.limit, window: '1h', name: 'per-customer', store, ...options },
    TEST_ADAPTER,
  );
  return { clock, limiters: boundLimiters(config, undefined) };
}

/** Sends one request for each limit from `first` on, `count` of them: each a limit not seen before. */
async function distinctLimits(limiters: BoundLimiters<PlanRequest>, first: number, count: number) {
  for (let limit = first; limit < first + count; limit++) await limiters.forRequest({ ...CLIENT, limit });
}

/** `global.gc`, when V8 lets it be switched on at run time (vitest does not expose it by default). */
function collector(): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return undefined;
  }
}

describe('the limiters of a limit function', () => {
  it(`keeps at most ${BOUND_LIMITERS_KEPT} for 5,000 distinct limits`, async () => {
    const { limiters } = perCustomer();
    await distinctLimits(limiters, 1, 5_000);
    expect(limiters.size).toBeLessThanOrEqual(BOUND_LIMITERS_KEPT);
    expect(limiters.size).toBe(BOUND_LIMITERS_KEPT);
  });

  it('keeps a limit in use while others come and go', async () => {
    const { limiters } = perCustomer();
    const hot = await limiters.forRequest({ ...CLIENT, limit: 7 });
    for (let batch = 0; batch < 30; batch++) {
      await distinctLimits(limiters, 1_000 + batch * 100, 100);
      expect(await limiters.forRequest({ ...CLIENT, limit: 7 })).toBe(hot);
    }
    expect(limiters.size).toBeLessThanOrEqual(BOUND_LIMITERS_KEPT); // while the others were let go
  });

  const gc = collector();
  it.skipIf(gc === undefined)('stops growing the heap once the cache is full', async () => {
    const { limiters } = perCustomer();
    const collect = gc as () => void;
    await distinctLimits(limiters, 1, 2 * BOUND_LIMITERS_KEPT);
    collect();
    const beforeBytes = process.memoryUsage().heapUsed;
    await distinctLimits(limiters, 10_000, 5_000);
    collect();
    const grownBytes = process.memoryUsage().heapUsed - beforeBytes;
    // Kept for ever, these 5,000 limiters grew the heap by ~11 MB (~2.3 KB each). Now only each limit let
    // go is remembered (a number, for resetKey): ~0.1 MB in all. 1 MB leaves room for the run's own noise.
    expect(grownBytes).toBeLessThan(1_000_000);
  });
});

describe('a limiter let go and built again', () => {
  it("finds its clients' buckets in the store as they were", async () => {
    const { limiters } = perCustomer();
    const first = await limiters.forRequest({ ...CLIENT, limit: 3 });
    for (let i = 0; i < 3; i++) expect((await first.limiter.consume(KEY)).allowed).toBe(true);
    expect((await first.limiter.consume(KEY)).allowed).toBe(false);
    await distinctLimits(limiters, 10, 2_000);
    const rebuilt = await limiters.forRequest({ ...CLIENT, limit: 3 });
    expect(rebuilt).not.toBe(first); // it was let go
    const decision = await rebuilt.limiter.consume(KEY);
    expect(decision.allowed).toBe(false);
    expect(decision.decidedBy.remaining).toBe(0);
  });

  it("finds its clients' bans in the store", async () => {
    const { limiters } = perCustomer({ ban: { after: 1, duration: '1d' } });
    const first = await limiters.forRequest({ ...CLIENT, limit: 3 });
    for (let i = 0; i < 4; i++) await first.limiter.consume(KEY);
    expect((await first.limiter.consume(KEY)).reason).toBe('banned');
    await distinctLimits(limiters, 10, 2_000);
    const rebuilt = await limiters.forRequest({ ...CLIENT, limit: 3 });
    expect(rebuilt).not.toBe(first);
    expect((await rebuilt.limiter.consume(KEY)).reason).toBe('banned');
  });

  it('is still reached by a reset while it is not kept', async () => {
    const { limiters } = perCustomer();
    const first = await limiters.forRequest({ ...CLIENT, limit: 3 });
    for (let i = 0; i < 3; i++) await first.limiter.consume(KEY);
    await distinctLimits(limiters, 10, 2_000);
    expect(limiters.size).toBeLessThanOrEqual(BOUND_LIMITERS_KEPT);
    // What `resetKey` does: reset through every limiter `built()` yields.
    await Promise.all(Array.from(limiters.built(), ({ limiter }) => limiter.reset(KEY)));
    expect(limiters.size).toBeLessThanOrEqual(BOUND_LIMITERS_KEPT); // the reset kept none of its own
    const rebuilt = await limiters.forRequest({ ...CLIENT, limit: 3 });
    expect((await rebuilt.limiter.consume(KEY)).decidedBy.remaining).toBe(2);
  });
});
