/** The insurance limiter: each policy counts in process memory as it counts on the store, on its share. */
import { describe, expect, it } from 'vitest';
import { resolvePolicies } from '../src/algorithms/policies.js';
import { insuranceFor } from '../src/limiter/insurance.js';

describe('insuranceFor', () => {
  it('keeps each policy algorithm, so a fixed window stays a fixed window while the store is down', async () => {
    const policies = resolvePolicies([
      { name: 'hourly', limit: 6, window: '1h', algorithm: 'fixed-window' },
      { name: 'smooth', limit: 60, window: '1m', burst: 90 },
      { name: 'sliding', limit: 30, window: '1m', algorithm: 'sliding-window' },
    ]);
    const insurance = insuranceFor(policies, { instances: 3 });
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
    const insurance = insuranceFor(policies, { instances: 2 }, () => nowMs);
    const allowed = [];
    for (let i = 0; i < 3; i++) allowed.push((await insurance.decide('owner', 1, 'consume')).allowed);
    expect(allowed).toEqual([true, true, false]);
    nowMs += 30_000; // a token bucket would have refilled one by now; a fixed window has not
    expect((await insurance.decide('owner', 1, 'consume')).allowed).toBe(false);
    nowMs += 30_000;
    expect((await insurance.decide('owner', 1, 'consume')).allowed).toBe(true);
  });
});
