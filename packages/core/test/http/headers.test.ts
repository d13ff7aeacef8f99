import { type Item, parseDictionary, parseItem, parseList } from 'structured-headers';
import { describe, expect, it } from 'vitest';
import {
  createHeaderWriter,
  HEADER_PROFILES,
  type HeaderProfile,
  stackHeaders,
} from '../../src/http/headers.js';
import { createLimiter } from '../../src/limiter.js';
import type { Policy } from '../../src/policy.js';
import { storeOnClock } from './fixtures.js';

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
 */
function listItems(value: string | undefined): Item[] {
  expect(value).toBeTypeOf('string');
  expect(value).not.toMatch(/=-?\d+\./);
  return parseList(value as string).map((member) => {
    expect(Array.isArray(member[0])).toBe(false);
    for (const param of member[1].values()) expect(Number.isInteger(param)).toBe(true);
    return member as Item;
  });
}

describe('draft-10 headers', () => {
  it('lists every policy in RateLimit-Policy as a string with integer q and w', async () => {
    const { headersAfter } = setup('draft-10');
    const policies = listItems((await headersAfter())['RateLimit-Policy']);
    expect(policies.map(([name, params]) => [name, Object.fromEntries(params)])).toEqual([
      ['minute', { q: 10, w: 60 }],
      ['hour', { q: 100, w: 3600 }],
    ]);
  });

  it('gives every policy in RateLimit its remaining tokens r and reset seconds t', async () => {
    const { headersAfter } = setup('draft-10');
    await headersAfter(3);
    const state = listItems((await headersAfter(2)).RateLimit);
    // 5 of 10 per minute spent: full again in 30 s; 5 of 100 per hour: in 180 s.
    expect(state.map(([name, params]) => [name, Object.fromEntries(params)])).toEqual([
      ['minute', { r: 5, t: 30 }],
      ['hour', { r: 95, t: 180 }],
    ]);
  });

  it('rounds reset seconds up and remaining tokens down', async () => {
    const { clock, headersAfter } = setup('draft-10', PER_MINUTE);
    await headersAfter(2);
    clock.nowMs += 3_001; // a token refills every 6 s: 0.5 of one is back
    const [[, params]] = listItems((await headersAfter(1)).RateLimit) as [Item];
    expect(params.get('r')).toBe(7); // 7.5 tokens
    expect(params.get('t')).toBe(15); // 2.5 tokens missing: 14.999 s
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
    // The minute policy has 1 token left, the hour 91: the minute decides.
    expect(headers.RateLimit).not.toMatch(/=-?\d+\./);
    const fields = parseDictionary(headers.RateLimit as string);
    expect([...fields].map(([name, [value]]) => [name, value])).toEqual([
      ['limit', 10],
      ['remaining', 1],
      ['reset', 54],
    ]);
    const [[quota, params]] = listItems(headers['RateLimit-Policy']) as [Item];
    expect([quota, Object.fromEntries(params)]).toEqual([10, { w: 60 }]);
    expect(Object.keys(headers).sort()).toEqual(['RateLimit', 'RateLimit-Policy']);
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
    expect(parseItem(headers['RateLimit-Limit'] as string)).toEqual([10, new Map()]);
    expect(parseItem(headers['RateLimit-Remaining'] as string)).toEqual([6, new Map()]);
    expect(parseItem(headers['RateLimit-Reset'] as string)).toEqual([24, new Map()]);
    expect(listItems(headers['RateLimit-Policy'])).toEqual([[10, new Map([['w', 60]])]]);
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

  it.each(HEADER_PROFILES)('is absent when the cost exceeds capacity, with profile %s', async (profile) => {
    const { headersAfter } = setup(profile, PER_MINUTE, true);
    const headers = await headersAfter(11);
    expect(headers).not.toHaveProperty('Retry-After');
  });
});

describe('stackHeaders', () => {
  const earlierHeaders: Record<string, string> = {
    'RateLimit-Policy': '"site";q=100;w=60',
    RateLimit: '"site";r=99;t=1',
    'Retry-After': '30',
  };
  const earlier = (name: string) => earlierHeaders[name];

  it('keeps both limiters’ draft-10 list members', () => {
    const stacked = stackHeaders(
      { 'RateLimit-Policy': '"login";q=5;w=900', RateLimit: '"login";r=4;t=180' },
      earlier,
    );
    expect(parseList(stacked['RateLimit-Policy'] as string).map(([name]) => name)).toEqual(['site', 'login']);
    expect(parseList(stacked.RateLimit as string).map(([name]) => name)).toEqual(['site', 'login']);
  });

  it('keeps the longer Retry-After', () => {
    expect(stackHeaders({ 'Retry-After': '10' }, earlier)['Retry-After']).toBe('30');
    expect(stackHeaders({ 'Retry-After': '90' }, earlier)['Retry-After']).toBe('90');
  });

  it("lets other profiles' fields and a first limiter's headers stand as they are", () => {
    const draft7 = { RateLimit: 'limit=5, remaining=4, reset=180', 'RateLimit-Policy': '5;w=900' };
    expect(stackHeaders(draft7, earlier)).toEqual(draft7);
    expect(stackHeaders(earlierHeaders, () => undefined)).toEqual(earlierHeaders);
  });
});
