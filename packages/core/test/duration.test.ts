import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../src/duration.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['15s', 15_000],
    ['1m', 60_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    ['1.5s', 1_500],
    ['1.1s', 1_100],
    ['2 m', 120_000],
    [250, 250],
  ] as const)('reads %s as %i ms', (input, expected) => {
    expect(parseDuration(input)).toBe(expected);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '', '1', '1w', 'm', '-1s', '0.5ms', '0s', null])(
    'rejects %s with a message naming the option',
    (input) => {
      expect(() => parseDuration(input as never, 'policy.window')).toThrow(/^policy\.window must be/);
    },
  );
});

describe('formatDuration', () => {
  it.each([
    [60_000, '1m'],
    [86_400_000, '1d'],
    [90_000, '90s'],
    [1_500, '1500ms'],
  ])('writes %i ms as %s', (ms, expected) => {
    expect(formatDuration(ms)).toBe(expected);
  });
});
