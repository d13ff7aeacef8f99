import { describe, expect, it } from 'vitest';
import type { ResolvedPolicy } from '../../../src/model/policy.js';
import {
  answerLength,
  answerStatus,
  bucketResultOf,
  EXPIRED,
  firstAnswerAt,
  nowOfShape,
  policySetArgs,
  REFUSED,
  ScriptCall,
  type ScriptCheck,
  singleCheckAnswers,
} from '../../../src/stores/redis/script/wire.js';

// The layout these pin is the one documented at the top of wire.ts, which the settle script reads.
const bucket: ResolvedPolicy = {
  name: 'b',
  algorithm: 'token-bucket',
  limit: 10,
  windowMs: 1000,
  capacity: 10,
  capacityUnits: 10_000,
};
const windowed: ResolvedPolicy = { ...bucket, name: 'w', algorithm: 'sliding-window' };
const one = [bucket];
const two = [bucket, windowed];
const ban = { after: 3, durationMs: 60_000 };

function check(
  key: string,
  policies: readonly ResolvedPolicy[],
  overrides: Partial<ScriptCheck> = {},
): ScriptCheck {
  return {
    key,
    policies,
    ban: undefined,
    overrides: false,
    nowArg: '',
    cost: 1,
    mode: 'consume',
    sinceArg: '',
    timeoutMs: undefined,
    ...overrides,
  };
}

describe('the settle script’s ARGV', () => {
  it('writes a policy set as n, then code, fields, limit, windowMs, capacityUnits per policy, then the ban and the rules', () => {
    expect(policySetArgs(two, ban, false)).toEqual([
      '2',
      '1',
      '2',
      '10',
      '1000',
      '10000',
      '3',
      '3',
      '10',
      '1000',
      '10000',
      '3',
      '60000',
      '0',
    ]);
    expect(policySetArgs(one, undefined, false)).toEqual([
      '1',
      '1',
      '2',
      '10',
      '1000',
      '10000',
      '0',
      '0',
      '0',
    ]);
    const penalties = { after: 0, durationMs: 0, exponentialBackoff: true, continueExceeding: true };
    expect(policySetArgs(one, penalties, false).slice(-3)).toEqual(['0', '0', '3']);
    expect(policySetArgs(one, penalties, true).slice(-3)).toEqual(['0', '0', '7']);
    expect(policySetArgs(one, undefined, true).slice(-3)).toEqual(['0', '0', '4']);
  });

  it('sends each set and each shape once, and names no check’s shape when there is one shape', () => {
    const call = new ScriptCall(
      (c) => policySetArgs(c.policies, c.ban, c.overrides),
      () => '',
    );
    expect([call.add(check('a', one)), call.add(check('b', one))]).toEqual([1, 1]);
    expect(call.keys).toEqual(['a', 'b']);
    expect(call.args()).toEqual([
      ...['1', ...policySetArgs(one, undefined, false)],
      '1',
      '1',
      '',
      '',
      '1',
      'consume',
      '',
    ]);
  });

  it('names each check’s shape, in KEYS order, when shapes differ', () => {
    const call = new ScriptCall(
      (c) => policySetArgs(c.policies, c.ban, c.overrides),
      (c) => (c.timeoutMs === undefined ? '' : '99'),
    );
    call.add(check('a', one));
    call.add(check('b', two, { ban, mode: 'peek', cost: 2, nowArg: '5', timeoutMs: 10 }));
    call.add(check('c', one));
    expect(call.shapes).toBe(2);
    expect(call.args()).toEqual([
      '2',
      ...policySetArgs(one, undefined, false),
      ...policySetArgs(two, ban, false),
      '2',
      ...['1', '', '', '1', 'consume', ''],
      ...['2', '5', '99', '2', 'peek', ''],
      ...['1', '2', '1'],
    ]);
  });
});

describe('the settle script’s reply', () => {
  // Two shapes' now, then: a decided check of two policies with a ban, one past its deadline, one refused.
  const reply = [1000, 2000, 1, 9000, 1000, 0, 0, 3, 7000, -1, -2, 'WRONGTYPE'];
  const decided = check('a', two, { ban });

  it('begins with each shape’s now, then the checks’ answers one after another', () => {
    let at = firstAnswerAt(2);
    expect(nowOfShape(reply, 1)).toBe(1000);
    expect(nowOfShape(reply, 2)).toBe(2000);
    expect(bucketResultOf(decided, reply, at, 1000)).toEqual({
      applied: true,
      nowMs: 1000,
      states: [
        [9000, 1000],
        [0, 0, 3],
      ],
      bannedUntilMs: 7000,
    });
    at += answerLength(reply, at, decided);
    expect(answerStatus(reply, at)).toBe(EXPIRED);
    at += answerLength(reply, at, decided);
    expect(answerStatus(reply, at)).toBe(REFUSED);
    expect(at + answerLength(reply, at, decided)).toBe(reply.length);
  });

  it('ends the answer of a check that reads overrides with the override it was decided by', () => {
    const overridable = check('a', one, { overrides: true });
    const none = [1000, 1, 9000, 1000, 0];
    expect(answerLength(none, 1, overridable)).toBe(4);
    expect(bucketResultOf(overridable, none, 1, 1000)).toEqual({
      applied: true,
      nowMs: 1000,
      states: [[9000, 1000]],
      bannedUntilMs: 0,
    });
    const raised = [1000, 1, 9000, 1000, '0:20:30'];
    const result = bucketResultOf(overridable, raised, 1, 1000);
    expect(result.policies?.map(({ limit, capacity }) => [limit, capacity])).toEqual([[20, 30]]);
    // One that fits no policy (too few limits, a zero) is none: the script decides by the policies too.
    expect(bucketResultOf(overridable, [1000, 1, 9000, 1000, '0:20'], 1, 1000).policies).toBeUndefined();
    expect(bucketResultOf(overridable, [1000, 1, 9000, 1000, '0:0:30'], 1, 1000).policies).toBeUndefined();
  });
});

describe('a single-check script’s answer as text', () => {
  const fixed: ResolvedPolicy = { ...bucket, name: 'f', algorithm: 'fixed-window' };

  it('reads now from the server’s seconds and microseconds, or from a store’s clock, after the fields', () => {
    expect(singleCheckAnswers('5000:3:1700000000:123999', check('a', [fixed]))).toEqual([
      1_700_000_000_123, 1, 5000, 3,
    ]);
    expect(singleCheckAnswers('5000:3:6000', check('a', [fixed]))).toEqual([6000, 1, 5000, 3]);
  });

  it('takes now from the token bucket’s time when the answer leaves it out', () => {
    expect(singleCheckAnswers('9000:4000', check('a', one))).toEqual([4000, 1, 9000, 4000]);
    expect(singleCheckAnswers('9000:4000:4500', check('a', one))).toEqual([4500, 1, 9000, 4000]);
  });

  it('reads every policy’s fields for a check of several, and passes an answer in a table as it is', () => {
    expect(singleCheckAnswers('9000:4000:3000:1:2:4100', check('a', two))).toEqual([
      4100, 1, 9000, 4000, 3000, 1, 2,
    ]);
    const table = [4000, 0, 0, 4000];
    expect(singleCheckAnswers(table, check('a', one))).toBe(table);
  });
});
