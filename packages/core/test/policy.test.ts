import { describe, expect, it } from 'vitest';
import { resolvePolicies } from '../src/policy.js';

describe('resolvePolicies', () => {
  it('resolves a policy into the units the stores count in', () => {
    expect(resolvePolicies({ limit: 100, window: '1m' })).toEqual([
      { name: '100-per-1m', limit: 100, windowMs: 60_000, capacity: 100, capacityUnits: 6_000_000 },
    ]);
  });

  it('takes burst as the capacity and keeps a given name', () => {
    const [policy] = resolvePolicies([{ limit: 1, window: '1s', burst: 5, name: 'trickle' }]);
    expect(policy).toMatchObject({ name: 'trickle', capacity: 5, capacityUnits: 5_000 });
  });

  it.each([
    [[], /at least one policy/],
    [{ limit: 0, window: '1s' }, /policy\.limit must be a positive whole number/],
    [{ limit: 1.5, window: '1s' }, /policy\.limit/],
    [{ limit: '10', window: '1s' }, /policy\.limit/],
    [{ limit: 10 }, /policy\.window/],
    [{ limit: 10, window: '1 fortnight' }, /policy\.window/],
    [{ limit: 10, window: '1s', burst: 0 }, /policy\.burst/],
    [{ limit: 10, window: '1s', name: 'has space' }, /policy\.name/],
    [{ limit: 10, window: '1s', name: '' }, /policy\.name/],
    [
      [
        { limit: 1, window: '1s' },
        { limit: 2, window: 'x' },
      ],
      /policies\[1\]\.window/,
    ],
    [
      [
        { limit: 1, window: '1s', name: 'a' },
        { limit: 2, window: '1m', name: 'a' },
      ],
      /unique; 'a' appears twice/,
    ],
    [{ limit: 1_000_000_000, window: '365d' }, /too large to count exactly/],
    [null, /must be an object/],
  ])('rejects %j', (input, message) => {
    expect(() => resolvePolicies(input as never)).toThrow(message);
  });
});
