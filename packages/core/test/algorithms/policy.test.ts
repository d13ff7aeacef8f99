import { describe, expect, it } from 'vitest';
import { resolvePolicies, resolvePoliciesFor } from '../../src/algorithms/policies.js';
import { createLimiter } from '../../src/limiter/limiter.js';

describe('resolvePolicies', () => {
  it('resolves a policy into the units the stores count in', () => {
    expect(resolvePolicies({ limit: 100, window: '1m' })).toEqual([
      {
        name: '100-per-1m',
        algorithm: 'token-bucket',
        limit: 100,
        windowMs: 60_000,
        capacity: 100,
        capacityUnits: 6_000_000,
      },
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
    [[[{ limit: 1, window: '1s' }]], /policy must be an object/],
    [
      { limit: 10, window: '1s', algorithm: 'sliding-log' },
      /algorithm must be one of 'token-bucket', 'fixed-window', 'sliding-window'; got 'sliding-log'$/,
    ],
    [
      { limit: 10, window: '1s', algorithm: 'sliding-windw' },
      /got 'sliding-windw'; did you mean 'sliding-window'\?/,
    ],
    [
      { limit: 10, window: '1s', algorithm: 'fixed-window', burst: 20 },
      /burst applies to the token bucket only/,
    ],
  ])('rejects %j', (input, message) => {
    expect(() => resolvePolicies(input as never)).toThrow(message);
  });
});

describe('unknown policy fields', () => {
  // A stray field used to be ignored, so { algorithm: 'fixed-window' } quietly ran a token bucket.
  it('takes algorithm as a field of its own, and runs what it names', () => {
    expect(resolvePolicies({ limit: 10, window: '1m', algorithm: 'fixed-window' })).toMatchObject([
      { algorithm: 'fixed-window' },
    ]);
  });

  it.each([
    ['max', 'use limit'],
    ['points', 'use limit'],
    ['windowMs', 'use window'],
    ['capacity', 'use burst'],
    ['limt', 'did you mean limit?'],
    ['nmae', 'did you mean name?'],
  ])('rejects %s with a hint: %s', (field, hint) => {
    const policy = { limit: 10, window: '1m', [field]: 5 } as never;
    expect(() => resolvePolicies(policy)).toThrow(`policy has an unknown field '${field}'; ${hint}`);
  });

  it('lists the fields for a name unlike any of them', () => {
    expect(() => resolvePolicies({ limit: 1, window: '1s', color: 'red' } as never)).toThrow(
      "policy has an unknown field 'color'. Known: limit, window, burst, name, algorithm",
    );
  });

  it('rejects them in createLimiter too', () => {
    expect(() => createLimiter({ policies: { limit: 1, window: '1s', algorithm: 'gcra' } as never })).toThrow(
      /policy.algorithm must be one of/,
    );
    expect(() => createLimiter({ policies: { limit: 1, window: '1s', color: 'red' } as never })).toThrow(
      /policy has an unknown field 'color'/,
    );
  });
});

describe('resolvePoliciesFor', () => {
  it('starts every message with the prefix', () => {
    for (const bad of [
      [],
      { limit: 0, window: '1s' },
      [
        { limit: 1, window: '1s', name: 'a' },
        { limit: 1, window: '1m', name: 'a' },
      ],
    ]) {
      expect(() => resolvePoliciesFor(bad, '@tollgate/x: ')).toThrow(/^@tollgate\/x: polic/);
    }
  });
});
