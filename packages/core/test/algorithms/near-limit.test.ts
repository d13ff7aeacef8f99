/**
 * The near-limit signal: a decision is near once the tokens used, its own included, reach the policy's
 * `nearLimit` fraction of the capacity; a refused decision never is, whoever answers it (the store, the
 * deny cache); the insurance limiter is near its own, shared, limit; and the decision event says so in
 * a field of its own, the outcome unchanged.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { nearLimitTokens } from '../../src/algorithms/near-limit.js';
import { resolvePolicies } from '../../src/algorithms/policies.js';
import { DECISION_CHANNEL, type DecisionEvent, subscribeTollgate } from '../../src/diagnostics/channels.js';
import { createLimiter } from '../../src/limiter/limiter.js';
import type { AlgorithmName, Policy } from '../../src/model/policy.js';
import type { Store } from '../../src/model/store.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';

const START_MS = 1_700_000_000_000;

/** A memory store that passes for a remote one, so the limiter keeps a deny cache in front of it. */
function remoteStore(clock: () => number): Store & { readonly calls: number } {
  const inner = new MemoryStore({ clock });
  let calls = 0;
  return {
    clock,
    get calls() {
      return calls;
    },
    update(request) {
      calls++;
      return inner.update(request);
    },
    reset: (key, policies) => inner.reset(key, policies),
  };
}

/** Which of `count` consumes from a full bucket were near; `null` for a refused one. */
async function nearOfEach(policies: Policy | Policy[], count: number): Promise<(boolean | null)[]> {
  const limiter = createLimiter({ store: new MemoryStore({ clock: () => START_MS }), policies });
  const marks: (boolean | null)[] = [];
  for (let i = 0; i < count; i++) {
    const decision = await limiter.consume('k');
    if (!decision.allowed) expect(decision.nearLimit).toBe(false);
    marks.push(decision.allowed ? decision.nearLimit : null);
  }
  return marks;
}

describe('nearLimit', () => {
  it.each(['token-bucket', 'fixed-window', 'sliding-window'] as AlgorithmName[])(
    'with limit 10 and nearLimit 0.8, requests 8, 9 and 10 are near and 11 is refused, not near (%s)',
    async (algorithm) => {
      expect(await nearOfEach({ limit: 10, window: '1m', nearLimit: 0.8, algorithm }, 11)).toEqual([
        false,
        false,
        false,
        false,
        false,
        false,
        false,
        true,
        true,
        true,
        null,
      ]);
    },
  );

  it('is off by default, and 1 marks only the request that empties the bucket', async () => {
    expect(await nearOfEach({ limit: 3, window: '1m' }, 3)).toEqual([false, false, false]);
    expect(await nearOfEach({ limit: 3, window: '1m', nearLimit: 1 }, 4)).toEqual([false, false, true, null]);
  });

  it('counts against the capacity: with a burst, of the burst', async () => {
    expect(await nearOfEach({ limit: 1, window: '1m', burst: 4, nearLimit: 0.5 }, 4)).toEqual([
      false,
      true,
      true,
      true,
    ]);
  });

  it('counts the tokens of the request itself, whatever its cost', async () => {
    const limiter = createLimiter({ policies: { limit: 10, window: '1h', nearLimit: 0.8 } });
    expect((await limiter.consume('k', { cost: 7 })).nearLimit).toBe(false);
    expect((await limiter.consume('k', { cost: 2 })).nearLimit).toBe(true);
  });

  it('marks each policy on its own; the decision is near when any policy is', async () => {
    const limiter = createLimiter({
      store: new MemoryStore({ clock: () => START_MS }),
      policies: [
        { limit: 4, window: '1s', name: 'burst', nearLimit: 0.5 },
        { limit: 100, window: '1h', name: 'hourly', nearLimit: 0.9 },
        { limit: 50, window: '1h', name: 'unmarked' },
      ],
    });
    await limiter.consume('k');
    const second = await limiter.consume('k');
    expect(second.nearLimit).toBe(true);
    expect(second.policies.map((p) => [p.policy, p.nearLimit])).toEqual([
      ['burst', true],
      ['hourly', false],
      ['unmarked', false],
    ]);
    await limiter.consume('k', { cost: 2 });
    const refused = await limiter.consume('k');
    expect(refused.allowed).toBe(false);
    expect(refused.nearLimit).toBe(false);
    expect(refused.policies.every((p) => !p.nearLimit)).toBe(true);
  });

  it('answers a refusal from the deny cache as the store does: never near', async () => {
    const store = remoteStore(() => START_MS);
    const limiter = createLimiter({ store, policies: { limit: 2, window: '1m', nearLimit: 0.5 } });
    expect((await limiter.consume('k')).nearLimit).toBe(true);
    expect((await limiter.consume('k')).nearLimit).toBe(true);
    const fromStore = await limiter.consume('k');
    const calls = store.calls;
    const fromCache = await limiter.consume('k');
    expect(store.calls).toBe(calls); // answered in process
    expect(fromCache).toEqual(fromStore);
    expect(fromCache.nearLimit).toBe(false);
  });

  it('makes the insurance limiter near its own share of the limit', async () => {
    const store: Store = {
      update: () => Promise.reject(new Error('down')),
      reset: async () => {},
    };
    const limiter = createLimiter({
      store,
      policies: { limit: 10, window: '1m', nearLimit: 0.5 },
      insurance: { instances: 2 },
    });
    const marks: boolean[] = [];
    for (let i = 0; i < 5; i++) marks.push((await limiter.consume('k')).nearLimit);
    expect(marks).toEqual([false, false, true, true, true]); // near 3 of the insurance's 5
  });

  it('judges a peek by the bucket as it stands: peek charges nothing', async () => {
    const limiter = createLimiter({ policies: { limit: 10, window: '1h', nearLimit: 0.8 } });
    await limiter.consume('k', { cost: 7 });
    expect((await limiter.peek('k')).nearLimit).toBe(false);
    await limiter.consume('k');
    expect((await limiter.peek('k')).nearLimit).toBe(true);
  });

  it.each([0, -0.5, 1.01, Number.NaN, '0.8', true])('rejects nearLimit %j at construction', (nearLimit) => {
    expect(() =>
      createLimiter({ policies: { limit: 10, window: '1m', nearLimit: nearLimit as never } }),
    ).toThrow(/policy\.nearLimit must be a fraction above 0 and at most 1, such as 0\.8; got /);
  });

  it('rounds float noise away before taking the whole tokens', () => {
    expect(0.07 * 100).toBeGreaterThan(7);
    expect(nearLimitTokens(0.07, 100)).toBe(7);
    expect(nearLimitTokens(0.8, 10)).toBe(8);
    expect(nearLimitTokens(0.01, 10)).toBe(1);
    expect(resolvePolicies({ limit: 10, window: '1m', nearLimit: 0.75 })[0]).toMatchObject({
      nearLimit: 0.75,
      nearLimitTokens: 8,
    });
  });

  it('leaves the bucket keys alone: changing nearLimit keeps the buckets', async () => {
    const store = new MemoryStore({ clock: () => START_MS });
    await createLimiter({ store, policies: { limit: 3, window: '1m' } }).consume('k', { cost: 2 });
    const marked = createLimiter({ store, policies: { limit: 3, window: '1m', nearLimit: 0.9 } });
    expect(await marked.peek('k')).toMatchObject({ nearLimit: false, decidedBy: { remaining: 1 } });
  });
});

describe('the decision event', () => {
  const events: DecisionEvent[] = [];
  afterAll(subscribeTollgate(DECISION_CHANNEL, (event) => events.push(event)));

  it('says nearLimit in a field of its own, the outcome staying allowed; never for a refusal', async () => {
    const limiter = createLimiter({
      policies: { limit: 2, window: '1h', nearLimit: 1 },
      namespace: 'events',
    });
    for (let i = 0; i < 3; i++) await limiter.consume('k');
    const mine = events.filter((event) => event.limiter === 'events');
    expect(mine.map(({ outcome, nearLimit }) => [outcome, nearLimit])).toEqual([
      ['allowed', false],
      ['allowed', true],
      ['limited', false],
    ]);
  });
});
