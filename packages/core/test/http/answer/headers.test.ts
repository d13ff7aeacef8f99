import { decodeDict, decodeItem, decodeList } from 'structured-field-values';
import { type Item, parseDictionary, parseItem, parseList } from 'structured-headers';
import { describe, expect, it } from 'vitest';
import { profileOnResponse, stackHeaders } from '../../../src/http/answer/header-stacking.js';
import {
  createHeaderWriter,
  HEADER_PROFILES,
  type HeaderProfile,
  retryAfterSeconds,
} from '../../../src/http/answer/headers.js';
import { createLimiter } from '../../../src/limiter/limiter.js';
import type { Policy } from '../../../src/model/policy.js';
import { parseDuration } from '../../../src/support/duration.js';
import { storeOnClock } from '../fixtures.js';

const PER_MINUTE: Policy = { limit: 10, window: '1m', name: 'minute' };
const PER_HOUR: Policy = { limit: 100, window: '1h', name: 'hour' };

/** A real limiter over a memory store on a hand-moved clock, with the header writer for its policies. */
function setup(profile: HeaderProfile, policies: Policy | Policy[] = [PER_MINUTE, PER_HOUR], legacy = false) {
  const { clock, store } = storeOnClock(1_700_000_000_500);
  const limiter = createLimiter({ store, policies });
  const writeHeaders = createHeaderWriter(profile, legacy, limiter.policies);
  const headersAfter = async (cost = 1) => writeHeaders(await limiter.consume('client', { cost }));
  return { clock, limiter, headersAfter };
}

/**
 * The list members of a structured field, as items (none of ours is an inner list). Every numeric parameter
 * must be an sf-integer: the parser reads `60.0` as 60 too, so the text is checked for decimals as well.
 * A second parser (structured-field-values) must read the same.
 */
function listItems(value: string | undefined): Item[] {
  expect(value).toBeTypeOf('string');
  expect(value).not.toMatch(/=-?\d+\./);
  const items = parseList(value as string).map((member) => {
    expect(Array.isArray(member[0])).toBe(false);
    for (const param of member[1].values()) expect(Number.isInteger(param)).toBe(true);
    return member as Item;
  });
  const again = decodeList(value as string).map((member) => [member.value, member.params ?? {}]);
  expect(again).toEqual(items.map(([name, params]) => [name, Object.fromEntries(params)]));
  return items;
}

/** The members of a list field as `{ name: params }`. */
function membersOf(value: string | undefined): Record<string, Record<string, unknown>> {
  return Object.fromEntries(listItems(value).map(([name, params]) => [name, Object.fromEntries(params)]));
}

/** A dictionary field of integers as an object, read by both parsers alike. */
function dictionaryOf(value: string | undefined): Record<string, unknown> {
  expect(value).not.toMatch(/=-?\d+\./);
  const fields = Object.fromEntries(
    [...parseDictionary(value as string)].map(([name, [item]]) => [name, item]),
  );
  const again = Object.fromEntries(Object.entries(decodeDict(value as string)).map(([k, v]) => [k, v.value]));
  expect(again).toEqual(fields);
  return fields;
}

/** An integer item field, read by both parsers alike. */
function integerOf(value: string | undefined): number {
  const [item] = parseItem(value as string);
  expect(decodeItem(value as string).value).toBe(item);
  expect(Number.isInteger(item)).toBe(true);
  return item as number;
}

describe('draft-11 headers', () => {
  it('lists every policy in RateLimit-Policy as a string with integer q and w', async () => {
    const { headersAfter } = setup('draft-11');
    const policies = listItems((await headersAfter())['RateLimit-Policy']);
    expect(policies.map(([name, params]) => [name, Object.fromEntries(params)])).toEqual([
      ['minute', { q: 10, w: 60 }],
      ['hour', { q: 100, w: 3600 }],
    ]);
  });

  it('gives every policy in RateLimit its remaining tokens r and t, the seconds until r grows', async () => {
    const { headersAfter } = setup('draft-11');
    await headersAfter(3);
    const state = listItems((await headersAfter(2)).RateLimit);
    // 5 of 10 per minute left: the next token in 6 s; 95 of 100 per hour: in 36 s. (Not the time until
    // the bucket is full, 30 s and 180 s: that was draft-09's meaning.)
    expect(state.map(([name, params]) => [name, Object.fromEntries(params)])).toEqual([
      ['minute', { r: 5, t: 6 }],
      ['hour', { r: 95, t: 36 }],
    ]);
  });

  it('rounds t up and remaining tokens down', async () => {
    const { clock, headersAfter } = setup('draft-11', PER_MINUTE);
    await headersAfter(2);
    clock.nowMs += 3_001; // a token refills every 6 s: 0.5 of one is back
    const [[, params]] = listItems((await headersAfter(1)).RateLimit) as [Item];
    expect(params.get('r')).toBe(7); // 7.5 tokens
    expect(params.get('t')).toBe(3); // the 8th token in 2.999 s
  });

  it('gives a full bucket the time one token takes as t: a token spent now is back then', async () => {
    const { headersAfter } = setup('draft-11', PER_MINUTE);
    const headers = await headersAfter(11); // more than the capacity: refused uncharged, the bucket stays full
    expect(membersOf(headers.RateLimit)).toEqual({ minute: { r: 10, t: 6 } });
  });

  it('sends the same fields for draft-10, whose syntax draft-11 kept', async () => {
    const eleven = setup('draft-11');
    const ten = setup('draft-10');
    for (const cost of [1, 4, 7, 3])
      expect(await ten.headersAfter(cost)).toEqual(await eleven.headersAfter(cost));
  });

  it.each([
    [
      { limit: 10, window: '500ms' },
      { q: 20, w: 1, 'tollgate-burst': 10 },
    ],
    [
      { limit: 10, window: '500ms', burst: 20 },
      { q: 20, w: 1 },
    ],
    [
      { limit: 10, window: '1500ms' },
      { q: 20, w: 3, 'tollgate-burst': 10 },
    ],
    [
      { limit: 3, window: 250 },
      { q: 12, w: 1, 'tollgate-burst': 3 },
    ],
    [
      { limit: 7, window: 1001 },
      { q: 7000, w: 1001, 'tollgate-burst': 7 },
    ],
    [
      { limit: 10, window: '1s' },
      { q: 10, w: 1 },
    ],
    [
      { limit: 10, window: '1m' },
      { q: 10, w: 60 },
    ],
  ] as const)('advertises %j as a quota true over a whole-second window: %j', async (policy, advertised) => {
    const { headersAfter } = setup('draft-11', { ...policy, name: 'p' });
    expect(membersOf((await headersAfter())['RateLimit-Policy'])).toEqual({ p: advertised });
    // q per w is the refill rate, limit per window, exactly.
    expect(advertised.q * parseDuration(policy.window)).toBe(policy.limit * advertised.w * 1000);
  });

  it('adds the capacity as tollgate-burst when it differs from q, since r can then exceed q', async () => {
    const { headersAfter } = setup('draft-11', { limit: 10, window: '1m', burst: 30, name: 'bursty' });
    const headers = await headersAfter();
    expect(membersOf(headers['RateLimit-Policy'])).toEqual({
      bursty: { q: 10, w: 60, 'tollgate-burst': 30 },
    });
    expect(membersOf(headers.RateLimit)).toEqual({ bursty: { r: 29, t: 6 } });
  });

  it('sends one member per policy of a single-policy limiter', async () => {
    const { headersAfter } = setup('draft-10', { limit: 5, window: '1s' });
    const headers = await headersAfter();
    expect(listItems(headers['RateLimit-Policy'])).toEqual([
      [
        '5-per-1s',
        new Map([
          ['q', 5],
          ['w', 1],
        ]),
      ],
    ]);
    expect(listItems(headers.RateLimit)).toEqual([
      [
        '5-per-1s',
        new Map([
          ['r', 4],
          ['t', 1],
        ]),
      ],
    ]);
  });
});

describe('draft-7 headers', () => {
  it('sends RateLimit as a dictionary of limit, remaining and reset of the deciding policy', async () => {
    const { headersAfter } = setup('draft-7');
    await headersAfter(8);
    const headers = await headersAfter(1);
    // The minute policy has 1 token left, the hour 91: the minute decides. Full again in 54 s.
    expect(dictionaryOf(headers.RateLimit)).toEqual({ limit: 10, remaining: 1, reset: 54 });
    const [[quota, params]] = listItems(headers['RateLimit-Policy']) as [Item];
    expect([quota, Object.fromEntries(params)]).toEqual([10, { w: 60 }]);
    expect(Object.keys(headers).sort()).toEqual(['RateLimit', 'RateLimit-Policy']);
  });

  it('gives reset the point in time of Retry-After on a 429, as draft-7 asks', async () => {
    const { headersAfter } = setup('draft-7', PER_MINUTE);
    await headersAfter(9);
    const headers = await headersAfter(3); // 1 token left, 2 short: 12 s; full in 54 s
    expect(dictionaryOf(headers.RateLimit)).toEqual({ limit: 10, remaining: 1, reset: 12 });
    expect(integerOf(headers['Retry-After'])).toBe(12);
  });
});

describe('draft-6 headers', () => {
  it('sends four separate fields of the deciding policy', async () => {
    const { headersAfter } = setup('draft-6');
    const headers = await headersAfter(4);
    expect(Object.keys(headers).sort()).toEqual([
      'RateLimit-Limit',
      'RateLimit-Policy',
      'RateLimit-Remaining',
      'RateLimit-Reset',
    ]);
    expect(integerOf(headers['RateLimit-Limit'])).toBe(10);
    expect(integerOf(headers['RateLimit-Remaining'])).toBe(6);
    expect(integerOf(headers['RateLimit-Reset'])).toBe(24);
    expect(listItems(headers['RateLimit-Policy'])).toEqual([[10, new Map([['w', 60]])]]);
  });

  it('gives RateLimit-Reset the point in time of Retry-After on a 429, as draft-6 asks', async () => {
    const { headersAfter } = setup('draft-6', PER_MINUTE);
    await headersAfter(10);
    const headers = await headersAfter(1);
    expect(integerOf(headers['RateLimit-Reset'])).toBe(6);
    expect(integerOf(headers['Retry-After'])).toBe(6);
  });

  it('advertises a sub-second window as a true whole-second quota, with the capacity', async () => {
    const { headersAfter } = setup('draft-6', { limit: 10, window: '500ms' });
    const headers = await headersAfter();
    expect(integerOf(headers['RateLimit-Limit'])).toBe(20);
    expect(listItems(headers['RateLimit-Policy'])).toEqual([
      [
        20,
        new Map([
          ['w', 1],
          ['tollgate-burst', 10],
        ]),
      ],
    ]);
  });
});

describe('no standard headers', () => {
  it('sends nothing while allowed', async () => {
    const { headersAfter } = setup(false);
    expect(await headersAfter()).toEqual({});
  });

  it('sends only Retry-After when denied', async () => {
    const { headersAfter } = setup(false, PER_MINUTE);
    await headersAfter(10);
    expect(await headersAfter()).toEqual({ 'Retry-After': '6' });
  });
});

describe('legacy headers', () => {
  it.each(HEADER_PROFILES)(
    'adds X-RateLimit-* with the reset in epoch seconds to profile %s',
    async (profile) => {
      const { clock, headersAfter } = setup(profile, PER_MINUTE, true);
      const headers = await headersAfter(4);
      expect(headers['X-RateLimit-Limit']).toBe('10');
      expect(headers['X-RateLimit-Remaining']).toBe('6');
      // Full again 24 s after the store's (injected) clock, rounded up to a whole second.
      expect(headers['X-RateLimit-Reset']).toBe(String(Math.ceil((clock.nowMs + 24_000) / 1000)));
      expect(headers['X-RateLimit-Reset']).toBe('1700000025');
    },
  );

  it('is off unless asked for', async () => {
    const { headersAfter } = setup('draft-10', PER_MINUTE, false);
    expect(Object.keys(await headersAfter()).filter((name) => name.startsWith('X-'))).toEqual([]);
  });
});

describe('Retry-After', () => {
  it.each(HEADER_PROFILES)('is absent while allowed, with profile %s', async (profile) => {
    const { headersAfter } = setup(profile, PER_MINUTE, true);
    expect(await headersAfter(10)).not.toHaveProperty('Retry-After');
  });

  it.each([
    [1, '1'],
    [999, '1'],
    [1000, '1'],
    [1001, '2'],
    [1999, '2'],
  ])('is %i ms rounded up to %s whole seconds', async (retryAfterMs, header) => {
    // One token per 2 s: after spending it, the wait is 2000 ms minus the time passed since.
    const { clock, limiter, headersAfter } = setup('draft-10', { limit: 1, window: '2s' });
    await limiter.consume('client');
    clock.nowMs += 2000 - retryAfterMs;
    const headers = await headersAfter();
    expect(parseItem(headers['Retry-After'] as string)).toEqual([Number(header), new Map()]);
  });

  it('waits for the policy that makes the client wait longest', async () => {
    const { headersAfter } = setup('draft-10', [
      { limit: 5, window: '1s', name: 'second' },
      { limit: 2, window: '1h', name: 'hour' },
    ]);
    await headersAfter();
    await headersAfter();
    // 'second' still has 3 tokens; 'hour' refills one token per 30 minutes.
    const headers = await headersAfter();
    expect(headers['Retry-After']).toBe('1800');
  });

  it('is never earlier than the deciding policy’s t, even for a fractional cost', async () => {
    // One token per 2 s. Half a token is there after 1 s, but r grows only when the whole token is back.
    const { limiter, headersAfter } = setup('draft-11', { limit: 1, window: '2s', name: 'slow' });
    await limiter.consume('client');
    const headers = await headersAfter(0.5);
    expect(membersOf(headers.RateLimit)).toEqual({ slow: { r: 0, t: 2 } });
    expect(integerOf(headers['Retry-After'])).toBe(2);
  });

  it('is never earlier than t of any policy that was short', async () => {
    const { clock, headersAfter } = setup('draft-11', [
      { limit: 3, window: '1s', name: 'second' },
      { limit: 4, window: '1m', name: 'minute' },
    ]);
    await headersAfter(3);
    clock.nowMs += 700;
    const headers = await headersAfter(3); // 'second' has 2.1 tokens, 'minute' 1.05: both short
    const retryAfter = integerOf(headers['Retry-After']);
    expect(retryAfter).toBe(30); // 'minute' needs 1.95 tokens more, at 15 s each
    expect(membersOf(headers.RateLimit)).toEqual({ second: { r: 2, t: 1 }, minute: { r: 1, t: 15 } });
  });

  it.each(HEADER_PROFILES)('is absent when the cost exceeds capacity, with profile %s', async (profile) => {
    const { headersAfter } = setup(profile, PER_MINUTE, true);
    const headers = await headersAfter(11);
    expect(headers).not.toHaveProperty('Retry-After');
  });
});

describe('retryAfterSeconds', () => {
  it('is undefined while allowed and when no wait will do', async () => {
    const { limiter } = setup('draft-11', PER_MINUTE);
    expect(retryAfterSeconds(await limiter.consume('client'))).toBeUndefined();
    expect(retryAfterSeconds(await limiter.consume('client', { cost: 11 }))).toBeUndefined();
  });
});

describe('stackHeaders', () => {
  const site = {
    'RateLimit-Policy': '"site";q=100;w=60',
    RateLimit: '"site";r=99;t=1',
    'Retry-After': '30',
  };
  const earlierOf = (profile: HeaderProfile | undefined, headers: Record<string, string> = site) => ({
    profile,
    get: (name: string) => headers[name],
  });
  const login = { 'RateLimit-Policy': '"login";q=5;w=900', RateLimit: '"login";r=4;t=180' };
  const sixFields = {
    'RateLimit-Policy': '2;w=10',
    'RateLimit-Limit': '2',
    'RateLimit-Remaining': '1',
    'RateLimit-Reset': '5',
  };

  it.each([
    ['draft-10', 'draft-10'],
    ['draft-10', 'draft-11'],
    ['draft-11', 'draft-10'],
  ] as const)('keeps both limiters’ list members when %s meets %s', (before, after) => {
    const stacked = stackHeaders({ headers: login, profile: after }, earlierOf(before));
    expect(Object.keys(membersOf(stacked.set['RateLimit-Policy']))).toEqual(['site', 'login']);
    expect(Object.keys(membersOf(stacked.set.RateLimit))).toEqual(['site', 'login']);
    expect(stacked.remove).toEqual([]);
    expect(stacked.profile).toBe(after);
  });

  it('keeps the longer Retry-After', () => {
    const earlier = earlierOf('draft-11');
    expect(
      stackHeaders({ headers: { 'Retry-After': '10' }, profile: false }, earlier).set['Retry-After'],
    ).toBe('30');
    expect(
      stackHeaders({ headers: { 'Retry-After': '90' }, profile: false }, earlier).set['Retry-After'],
    ).toBe('90');
  });

  // The bug: an app-wide draft-10 limiter, then a route's draft-6 one, sent `RateLimit-Policy: 2;w=10`
  // beside the app-wide `RateLimit` list, a pair that describes no one policy and that a draft-10 parser rejects.
  it('replaces a draft-10 limiter’s fields with a later draft-6 limiter’s, removing the rest', () => {
    const stacked = stackHeaders({ headers: sixFields, profile: 'draft-6' }, earlierOf('draft-10'));
    expect(stacked.set).toEqual(sixFields);
    expect(stacked.remove).toEqual(['RateLimit']);
    expect(stacked.profile).toBe('draft-6');
  });

  it('replaces a draft-6 limiter’s fields with a later draft-11 limiter’s, removing the rest', () => {
    const stacked = stackHeaders({ headers: login, profile: 'draft-11' }, earlierOf('draft-6', sixFields));
    expect(stacked.set).toEqual(login);
    expect(stacked.remove).toEqual(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']);
    expect(stacked.profile).toBe('draft-11');
  });

  it('lets a later draft-7 limiter replace an earlier draft-7 one: one policy per response', () => {
    const draft7 = { RateLimit: 'limit=5, remaining=4, reset=180', 'RateLimit-Policy': '5;w=900' };
    const earlier = earlierOf('draft-7', {
      RateLimit: 'limit=9, remaining=1, reset=2',
      'RateLimit-Policy': '9;w=60',
    });
    expect(stackHeaders({ headers: draft7, profile: 'draft-7' }, earlier)).toEqual({
      set: draft7,
      remove: [],
      profile: 'draft-7',
    });
  });

  it('leaves the earlier fields alone after a limiter with headers: false', () => {
    const stacked = stackHeaders({ headers: {}, profile: false }, earlierOf('draft-11'));
    expect(stacked).toEqual({ set: {}, remove: [], profile: 'draft-11' });
  });

  it("lets a first limiter's headers stand as they are", () => {
    const none = { profile: undefined, get: () => undefined };
    expect(stackHeaders({ headers: site, profile: 'draft-11' }, none)).toEqual({
      set: site,
      remove: [],
      profile: 'draft-11',
    });
    expect(stackHeaders({ headers: {} }, none)).toEqual({ set: {}, remove: [], profile: undefined });
  });
});

describe('profileOnResponse', () => {
  const read = (headers: Record<string, string>, name: string) => headers[name];
  // draft-10 and draft-11 are one family: the same fields in the same syntax.
  const family: Record<string, HeaderProfile | undefined> = {
    'draft-11': 'draft-11',
    'draft-10': 'draft-11',
    'draft-7': 'draft-7',
    'draft-6': 'draft-6',
    false: undefined,
  };

  it.each(HEADER_PROFILES)(
    'reads the profile %s off the fields it writes, legacy ones beside',
    async (profile) => {
      const { headersAfter } = setup(profile, [PER_MINUTE, PER_HOUR], true);
      for (const cost of [1, 11]) {
        expect(profileOnResponse(await headersAfter(cost), read)).toBe(family[String(profile)]);
      }
    },
  );

  it('finds none on a response no limiter wrote to, a missing field read as Koa reads it included', () => {
    expect(profileOnResponse({}, read)).toBeUndefined();
    expect(profileOnResponse({ 'Retry-After': '30' }, read)).toBeUndefined();
    expect(profileOnResponse({}, () => '')).toBeUndefined();
  });
});
