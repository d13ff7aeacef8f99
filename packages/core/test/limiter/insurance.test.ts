/** The insurance limiter: each policy counts in process memory as it counts on the store, on its share. */
import { describe, expect, it } from 'vitest';
import { resolvePolicies } from '../../src/algorithms/policies.js';
import { insuranceFor } from '../../src/limiter/in-process.js';

describe('insuranceFor', () => {
  it('keeps each policy algorithm, so a fixed window stays a fixed window while the store is down', async () => {
    const policies = resolvePolicies([
      { name: 'hourly', limit: 6, window: '1h', algorithm: 'fixed-window' },
      { name: 'smooth', limit: 60, window: '1m', burst: 90 },
      { name: 'sliding', limit: 30, window: '1m', algorithm: 'sliding-window' },
    ]);
    const insurance = insuranceFor(policies, { instances: 3, maxKeys: 100_000 });
    expect(
      insurance.policies.map(({ name, algorithm, limit, capacity }) => [name, algorithm, limit, capacity]),
    ).toEqual([
      ['hourly', 'fixed-window', 2, 2],
      ['smooth', 'token-bucket', 20, 30],
      ['sliding', 'sliding-window', 10, 10],
    ]);
  });

  it('refuses a fixed window share once it is spent, until the window ends', async () => {
    let nowMs = 1_700_000_000_000;
    const policies = resolvePolicies({ limit: 4, window: '1m', algorithm: 'fixed-window' });
    const insurance = insuranceFor(policies, { instances: 2, maxKeys: 100_000 }, () => nowMs);
    const allowed = [];
    for (let i = 0; i < 3; i++) allowed.push((await insurance.decide('owner', 1, 'consume')).allowed);
    expect(allowed).toEqual([true, true, false]);
    nowMs += 30_000; // a token bucket would have refilled one by now; a fixed window has not
    expect((await insurance.decide('owner', 1, 'consume')).allowed).toBe(false);
    nowMs += 30_000;
    expect((await insurance.decide('owner', 1, 'consume')).allowed).toBe(true);
  });

  it('judges a cost by the real policies: more than a share holds is charged a whole share, not refused outright', async () => {
    let nowMs = 1_700_000_000_000;
    const insurance = insuranceFor(
      resolvePolicies({ limit: 10, window: '1s' }),
      { instances: 4, maxKeys: 100_000 },
      () => nowMs,
    );
    expect(insurance.policies[0]?.capacity).toBe(2);
    const first = await insurance.decide('owner', 3, 'consume');
    expect(first).toMatchObject({ allowed: true, cost: 3, degraded: true });
    const second = await insurance.decide('owner', 3, 'consume');
    expect(second).toMatchObject({ allowed: false, reason: 'limited', retryAfterMs: 1_000 }); // a full share again
    nowMs += 1_000;
    expect((await insurance.decide('owner', 3, 'consume')).allowed).toBe(true);
    // More than the real policy holds is refused outright, as the store would refuse it.
    expect(await insurance.decide('owner', 11, 'consume')).toMatchObject({
      allowed: false,
      reason: 'cost-exceeds-capacity',
      retryAfterMs: undefined,
    });
  });

  it('admits a large reservation against its share while the store is down', async () => {
    const insurance = insuranceFor(resolvePolicies({ limit: 100_000, window: '1m' }), {
      instances: 32,
      maxKeys: 100_000,
    });
    expect(await insurance.decide('owner', 4_000, 'consume')).toMatchObject({ allowed: true, cost: 4_000 });
  });
});
