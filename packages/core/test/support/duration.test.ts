import { describe, expect, it } from 'vitest';
import { type Duration, formatDuration, parseDuration } from '../../src/support/duration.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['15s', 15_000],
    ['1m', 60_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    ['1w', 604_800_000],
    ['1.5s', 1_500],
    ['1.1s', 1_100],
    ['2 m', 120_000],
    [250, 250],
  ] as const)('reads %s as %i ms', (input, expected) => {
    expect(parseDuration(input)).toBe(expected);
  });

  it.each([
    ['10 seconds', 10_000],
    ['1 second', 1_000],
    ['2 minutes', 120_000],
    ['1 minute', 60_000],
    ['1min', 60_000],
    ['5 mins', 300_000],
    ['30 sec', 30_000],
    ['30secs', 30_000],
    ['1 hour', 3_600_000],
    ['2 hours', 7_200_000],
    ['1hr', 3_600_000],
    ['3 hrs', 10_800_000],
    ['1 day', 86_400_000],
    ['7 days', 604_800_000],
    ['1 week', 604_800_000],
    ['2 weeks', 1_209_600_000],
    ['500 milliseconds', 500],
    ['1 millisecond', 1],
    ['20 msecs', 20],
    ['1.5h', 5_400_000],
    ['1.5 hours', 5_400_000],
    ['0.25 minutes', 15_000],
    ['  10   seconds  ', 10_000],
  ] as const)('reads the words of %j as %i ms', (input, expected) => {
    expect(parseDuration(input)).toBe(expected);
  });

  it('scales decimal digits exactly, however many there are', () => {
    expect(parseDuration('0.001s')).toBe(1);
    expect(parseDuration('1.100000000000000000000s')).toBe(1_100);
    expect(parseDuration('0.0000003125 weeks')).toBe(189); // 604800000 × 3125 / 10^10, exactly
    expect(() => parseDuration('1.0000000000000000001s')).toThrow(/whole number of milliseconds/);
    expect(() => parseDuration('0.0000003124 weeks')).toThrow(/whole number of milliseconds/);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '', 'm', '-1s', '1.s', '.5s', '1..5s', null])(
    'rejects %j with a message naming the option',
    (input) => {
      expect(() => parseDuration(input as never, 'policy.window')).toThrow(/^policy\.window must be/);
    },
  );

  it.each([
    ['0.5ms', "policy.window must be a whole number of milliseconds; '0.5ms' is not"],
    ['1.0005s', "policy.window must be a whole number of milliseconds; '1.0005s' is not"],
    ['0s', "policy.window must be positive; got '0s'"],
    ['0 minutes', "policy.window must be positive; got '0 minutes'"],
    ['15', "policy.window: '15' has no unit; write 15 for milliseconds, or '15s'"],
    ['1.5', "policy.window: '1.5' has no unit; write 1.5 for milliseconds, or '1.5s'"],
  ])('rejects %j: %s', (input, message) => {
    expect(() => parseDuration(input, 'policy.window')).toThrow(new TypeError(message));
  });

  it.each([
    ['10 secnds', "did you mean '10 seconds'?"],
    ['10 secs.', 'must be milliseconds or a duration such as'],
    ['2 mintues', "did you mean '2 minutes'?"],
    ['1 huor', "did you mean '1 hour'?"],
    ['3 dyas', "did you mean '3 days'?"],
    ['1 weak', "did you mean '1 week'?"],
    ['10 Seconds', "did you mean '10 seconds'?"],
    ['5S', "did you mean '5s'?"],
    ['5MS', "did you mean '5ms'?"],
    ['100 milisecond', "did you mean '100 millisecond'?"],
  ])('suggests the spelling meant for %j', (input, hint) => {
    const attempt = () => parseDuration(input as Duration, 'window');
    expect(attempt).toThrow(TypeError);
    expect(attempt).toThrow(hint);
  });

  it('names the known units when nothing is close', () => {
    expect(() => parseDuration('1 fortnight', 'window')).toThrow(
      new TypeError(
        "window: unknown unit 'fortnight' in '1 fortnight'; write ms, s, m, h, d or w, or a word such as '10 seconds', '2 minutes', '1 hour', '1 week'",
      ),
    );
    expect(() => parseDuration('1x', 'window')).toThrow(/unknown unit 'x' in '1x'; write ms, s/);
  });

  it.each([
    [
      '1 month',
      "window: '1 month' is not a duration here: months differ in length; write days, such as '30d'",
    ],
    ['2mo', "window: '2mo' is not a duration here: months differ in length; write days, such as '30d'"],
    ['1y', "window: '1y' is not a duration here: years differ in length; write days, such as '365d'"],
    ['1 Year', "window: '1 Year' is not a duration here: years differ in length; write days, such as '365d'"],
    ['1M', "window: '1M' is not a duration here: 'M' is ambiguous: write 'm' for minutes (months differ"],
    ['500us', "window: '500us' is not a duration here: Tollgate counts whole milliseconds"],
  ])('explains why %j is not a duration', (input, message) => {
    expect(() => parseDuration(input, 'window')).toThrow(message);
  });
});

describe('formatDuration', () => {
  it.each([
    [60_000, '1m'],
    [86_400_000, '1d'],
    [604_800_000, '7d'], // not '1w': default policy names must not change
    [90_000, '90s'],
    [1_500, '1500ms'],
  ])('writes %i ms as %s', (ms, expected) => {
    expect(formatDuration(ms)).toBe(expected);
  });
});
