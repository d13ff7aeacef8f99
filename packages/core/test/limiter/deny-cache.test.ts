/**
 * The deny cache's exactness argument, checked against the store it stands in front of: whatever it
 * answers is a refusal the store would give at that moment too, for any algorithm, policy set, cost and
 * delay, when the store's clock runs behind the cache's (the store decided after the cache asked) but
 * never ahead of it. It never admits; once the cached wait is over it asks the store again.
 */
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/algorithms/decide.js';
import { resolvePolicies } from '../../src/algorithms/policies.js';
import { DenyCache } from '../../src/limiter/in-process.js';
import type { AlgorithmName, Policy } from '../../src/model/policy.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { seeded } from '../seeded.js';

const ALGORITHM_NAMES: readonly AlgorithmName[] = ['token-bucket', 'fixed-window', 'sliding-window'];

function policiesOf(random: () => number): Policy[] {
  const count = 1 + Math.floor(random() * 2);
  return Array.from({ length: count }, (_, i) => {
    const algorithm = ALGORITHM_NAMES[Math.floor(random() * ALGORITHM_NAMES.length)] as AlgorithmName;
    const limit = 1 + Math.floor(random() * 6);
    const window = 100 + Math.floor(random() * 2_000);
    const burst =
      algorithm === 'token-bucket' && random() < 0.5 ? limit + Math.floor(random() * 4) : undefined;
    return { name: `p${i}`, algorithm, limit, window, ...(burst ? { burst } : {}) };
  });
}

/** Time passing between two checks, as a test clock moves it. */
type Passing = (random: () => number) => number;

/** Whole milliseconds, from none to more than a second. */
const WHOLE_MS: Passing = (random) =>
  random() < 0.7 ? Math.floor(random() * 50) : Math.floor(random() * 1_500);

/** Mostly a fraction of a millisecond, as a real clock moves between the checks of a flood. */
const FRACTIONS_OF_MS: Passing = (random) => (random() < 0.8 ? random() * 1.5 : Math.floor(random() * 1_500));

describe('DenyCache', () => {
  it.each([
    ...[1, 2, 3, 4, 5, 6, 7, 8].map((seed) => ({ seed, passing: WHOLE_MS, steps: 'whole ms' })),
    ...[1, 2, 3, 4].map((seed) => ({ seed, passing: FRACTIONS_OF_MS, steps: 'fractions of a ms' })),
  ])(
    'answers only refusals the store gives at that moment too (seed $seed, $steps)',
    async ({ seed, passing }) => {
      const random = seeded(seed);
      const policies = resolvePolicies(policiesOf(random));
      let storeMs = 1_700_000_000_000;
      let cacheMs = 5_000;
      const store = new MemoryStore({ clock: () => storeMs });
      const cache = new DenyCache(policies, 100, () => cacheMs);
      const maxCost = Math.max(...policies.map((policy) => policy.capacity));
      let answered = 0;
      for (let step = 0; step < 1_500; step++) {
        const cost = 1 + Math.floor(random() * maxCost);
        const cached = cache.check('owner', cost);
        if (cached !== undefined) {
          answered++;
          expect(cached.allowed).toBe(false);
          const peek = await store.update({ key: 'owner', policies, cost, mode: 'peek' });
          expect({ step, cost, storeAdmits: peek.applied }).toEqual({ step, cost, storeAdmits: false });
        } else {
          const askedAtMs = cacheMs;
          // The store decides a little after the cache asked: its clock moves no more than the cache's.
          const lagMs = Math.floor(random() * 30);
          storeMs += lagMs;
          cacheMs += lagMs + Math.floor(random() * 5);
          const result = await store.update({ key: 'owner', policies, cost, mode: 'consume' });
          cache.record('owner', result, decide(policies, result, cost), askedAtMs);
        }
        // Time passes; the cache's clock never moves less than the store's.
        const passedMs = passing(random);
        storeMs += passedMs;
        cacheMs += passedMs + (random() < 0.2 ? Math.floor(random() * 20) : 0);
      }
      // The table exercises the cache, not just the store: it answered a good share of the checks.
      expect(answered).toBeGreaterThan(50);
    },
  );

  it('asks the store again once the cached wait is over', async () => {
    const policies = resolvePolicies({ limit: 1, window: 1_000 });
    let nowMs = 1_700_000_000_000;
    const store = new MemoryStore({ clock: () => nowMs });
    const cache = new DenyCache(policies, 10, () => nowMs);
    await store.update({ key: 'owner', policies, cost: 1, mode: 'consume' });
    const refused = await store.update({ key: 'owner', policies, cost: 1, mode: 'consume' });
    const decision = decide(policies, refused, 1);
    cache.record('owner', refused, decision, nowMs);
    expect(cache.check('owner', 1)?.allowed).toBe(false);
    nowMs += decision.retryAfterMs as number;
    expect(cache.check('owner', 1)).toBeUndefined();
  });

  it('answers one refusal again as it is for at most 1 ms, and never once the cost could fit', async () => {
    const policies = resolvePolicies({ limit: 10, window: 1_000 });
    let nowMs = 1_700_000_000_000;
    const store = new MemoryStore({ clock: () => nowMs });
    const cache = new DenyCache(policies, 10, () => nowMs);
    await store.update({ key: 'owner', policies, cost: 10, mode: 'consume' });
    const refused = await store.update({ key: 'owner', policies, cost: 1, mode: 'consume' });
    cache.record('owner', refused, decide(policies, refused, 1), nowMs);
    const first = cache.check('owner', 1);
    expect(first?.allowed).toBe(false);
    nowMs += 0.5;
    expect(cache.check('owner', 1)).toBe(first);
    expect(cache.check('owner', 2)).not.toBe(first); // another cost: its own answer
    nowMs += 0.5;
    const later = cache.check('owner', 1);
    expect(later).not.toBe(first);
    expect(later?.retryAfterMs).toBeLessThan(first?.retryAfterMs as number);
    // 1 ms before the refused cost fits, the answer is made afresh each time.
    nowMs += (later?.retryAfterMs as number) - 1;
    const nearlyFits = cache.check('owner', 1);
    expect(nearlyFits?.allowed).toBe(false);
    expect(cache.check('owner', 1)).not.toBe(nearlyFits);
    nowMs += 1;
    expect(cache.check('owner', 1)).toBeUndefined();
  });

  it('forgets the oldest owner first when full, which only costs a round trip', async () => {
    const policies = resolvePolicies({ limit: 1, window: 60_000 });
    const nowMs = 1_700_000_000_000;
    const store = new MemoryStore({ clock: () => nowMs });
    const cache = new DenyCache(policies, 2, () => nowMs);
    for (const owner of ['a', 'b', 'c']) {
      await store.update({ key: owner, policies, cost: 1, mode: 'consume' });
      const refused = await store.update({ key: owner, policies, cost: 1, mode: 'consume' });
      cache.record(owner, refused, decide(policies, refused, 1), nowMs);
    }
    expect(cache.check('a', 1)).toBeUndefined();
    expect(cache.check('b', 1)?.allowed).toBe(false);
    expect(cache.check('c', 1)?.allowed).toBe(false);
  });
});
