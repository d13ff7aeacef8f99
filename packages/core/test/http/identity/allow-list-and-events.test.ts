/** `allowList`, `onExceeding` and `onExceeded` on the core: who is never charged, and who is told what. */
import { describe, expect, it } from 'vitest';
import type { RateLimitInfo } from '../../../src/http/answer/outcome.js';
import type { RateLimitOptions } from '../../../src/http/options/option-types.js';
import { createHttpLimiter } from '../../../src/http/pipeline/http-limiter.js';
import { type FakeRequest, fakeAccess, recordingLogger, storeOnClock, TEST_ADAPTER } from '../fixtures.js';

type Options = RateLimitOptions<FakeRequest>;

function setup(options: Options) {
  const { store } = storeOnClock();
  const { logger, errors, warnings } = recordingLogger();
  const limiter = createHttpLimiter<FakeRequest>(
    { limit: 1, window: '1h', name: 'events', store, logger, ...options },
    fakeAccess,
    TEST_ADAPTER,
  );
  const kinds = async (request: FakeRequest, count: number) => {
    const seen: string[] = [];
    for (let i = 0; i < count; i++) seen.push((await limiter.check({ ...request })).kind);
    return seen;
  };
  return { limiter, errors, warnings, kinds };
}

describe('allowList', () => {
  it('never charges a listed IP, nor sends it headers; IPv4 written as IPv6 is the same client', async () => {
    const { kinds } = setup({ allowList: ['203.0.113.7', '2001:DB8::1'] });
    expect(await kinds({ ip: '203.0.113.7' }, 3)).toEqual(['skipped', 'skipped', 'skipped']);
    expect(await kinds({ ip: '::ffff:203.0.113.7' }, 2)).toEqual(['skipped', 'skipped']);
    expect(await kinds({ ip: '2001:db8::1' }, 2)).toEqual(['skipped', 'skipped']);
    expect(await kinds({ ip: '2001:db8::2' }, 2)).toEqual(['allowed', 'limited']);
  });

  it('compares IPs as the framework resolved them, never as X-Forwarded-For says', async () => {
    const { kinds } = setup({ allowList: ['10.0.0.1'] });
    const spoofing = { ip: '198.51.100.9', headers: { 'x-forwarded-for': '10.0.0.1' } };
    expect(await kinds(spoofing, 2)).toEqual(['allowed', 'limited']);
  });

  it('matches identities as the key function returns them', async () => {
    const { kinds } = setup({ allowList: ['user:admin'], key: (request) => `user:${request.user}` });
    expect(await kinds({ ip: '203.0.113.7', user: 'admin' }, 2)).toEqual(['skipped', 'skipped']);
    expect(await kinds({ ip: '203.0.113.7', user: 'ada' }, 2)).toEqual(['allowed', 'limited']);
  });

  it('asks a function, sync or async, with the request and its identity', async () => {
    const asked: [FakeRequest, string][] = [];
    const { kinds } = setup({
      allowList: async (request, key) => {
        asked.push([request, key]);
        return request.plan === 'pro';
      },
    });
    expect(await kinds({ ip: '203.0.113.7', plan: 'pro' }, 2)).toEqual(['skipped', 'skipped']);
    expect(await kinds({ ip: '203.0.113.7' }, 2)).toEqual(['allowed', 'limited']);
    expect(asked[0]).toEqual([{ ip: '203.0.113.7', plan: 'pro' }, 'ip:203.0.113.7']);
  });

  it.each([
    ['a string', '10.0.0.1', /allowList must be an array of IPs and identities, or a function/],
    ['an empty entry', ['10.0.0.1', ''], /allowList must hold only non-empty strings; got /],
    ['a number', [42], /allowList must hold only non-empty strings; got 42/],
  ])('rejects %s at construction', (_name, allowList, message) => {
    expect(() => setup({ allowList: allowList as never })).toThrow(message);
  });
});

describe('onExceeding and onExceeded', () => {
  it('tells onExceeding of each request let through and onExceeded of each refused, with its info', async () => {
    const told: string[] = [];
    const { kinds } = setup({
      onExceeding: (request, info) => void told.push(`exceeding ${request.ip} r=${info.remaining}`),
      onExceeded: async (request, info) => void told.push(`exceeded ${request.ip} ${info.decision.reason}`),
    });
    expect(await kinds({ ip: '203.0.113.7' }, 2)).toEqual(['allowed', 'limited']);
    expect(told).toEqual(['exceeding 203.0.113.7 r=0', 'exceeded 203.0.113.7 limited']);
  });

  it('answers as usual when a callback throws or rejects, and logs TOLLGATE_CALLBACK_FAILED once per 10 s', async () => {
    const { kinds, errors } = setup({
      onExceeding: () => {
        throw new Error('metrics down');
      },
      onExceeded: () => Promise.reject(new Error('also down')),
    });
    expect(await kinds({ ip: '203.0.113.7' }, 3)).toEqual(['allowed', 'limited', 'limited']);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(errors).toEqual([
      '[TOLLGATE_CALLBACK_FAILED] onExceeding failed; the request went on: metrics down',
    ]);
  });

  it('does not wait for a slow callback', async () => {
    let finish: () => void = () => {};
    const { limiter } = setup({ onExceeding: () => new Promise<void>((resolve) => (finish = resolve)) });
    const outcome = await limiter.check({ ip: '203.0.113.7' });
    expect(outcome.kind).toBe('allowed');
    finish();
  });

  it('calls neither for requests skipped or allow-listed', async () => {
    const told: RateLimitInfo[] = [];
    const { kinds } = setup({
      skip: (request) => request.plan === 'free',
      allowList: ['203.0.113.7'],
      onExceeding: (_request, info) => void told.push(info),
      onExceeded: (_request, info) => void told.push(info),
    });
    await kinds({ ip: '203.0.113.7' }, 2);
    await kinds({ ip: '198.51.100.1', plan: 'free' }, 2);
    expect(told).toEqual([]);
  });
});

describe('bad callbacks', () => {
  it.each([
    [{ onExceeding: 'log' }, '@tollgate/test: onExceeding must be a function'],
    [{ onExceeded: {} }, '@tollgate/test: onExceeded must be a function'],
  ])('rejects %j at construction', (options, message) => {
    expect(() => setup(options as never)).toThrow(new TypeError(message));
  });
});
