import { parseList } from 'structured-headers';
import { describe, expect, it } from 'vitest';
import type { RateLimitOutcome } from '../../../src/http/answer/outcome.js';
import { QUOTA_EXCEEDED_TYPE } from '../../../src/http/answer/problem.js';
import type { RateLimitOptions } from '../../../src/http/options/option-types.js';
import { createHttpLimiter } from '../../../src/http/pipeline/http-limiter.js';
import { limitOrZero, resolveZeroLimit, zeroLimiter } from '../../../src/limiter/zero-limit.js';
import type { Store } from '../../../src/model/store.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import { clockAt, type FakeRequest, failingStore, fakeAccess, TEST_ADAPTER } from '../fixtures.js';

const CLIENT: FakeRequest = { ip: '203.0.113.7' };

/** A store that fails the test if it is asked anything: limit 0 must never reach it. */
const untouchedStore = () => failingStore(new Error('limit 0 asked the store'));

function limited(outcome: RateLimitOutcome) {
  expect(outcome.kind).toBe('limited');
  return outcome as Extract<RateLimitOutcome, { kind: 'limited' }>;
}

const build = (options: RateLimitOptions<FakeRequest>) =>
  createHttpLimiter<FakeRequest>({ name: 'zero', ...options }, fakeAccess, TEST_ADAPTER);

describe('limit: 0', () => {
  it('refuses every request, first one included, without asking the store', async () => {
    const store = untouchedStore();
    const limiter = build({ limit: 0, window: '1m', store });
    for (let i = 0; i < 3; i++) {
      const { info } = limited(await limiter.check(CLIENT));
      expect(info.decision).toMatchObject({
        allowed: false,
        reason: 'limited',
        retryAfterMs: undefined,
        decidedBy: { policy: '0-per-1m', limit: 0, capacity: 0, remaining: 0, resetMs: 0 },
      });
    }
    expect(store.calls).toBe(0);
  });

  it('sends the policy as it is, and no Retry-After: no wait will do', async () => {
    const { headers } = limited(await build({ limit: 0, legacyHeaders: true }).check(CLIENT));
    const params = (value: string | undefined) =>
      Object.fromEntries(parseList(value ?? '').map(([name, p]) => [name, Object.fromEntries(p)]));
    expect(params(headers['RateLimit-Policy'])).toEqual({ '0-per-1m': { q: 0, w: 60 } });
    expect(params(headers.RateLimit)).toMatchObject({ '0-per-1m': { r: 0 } }); // `t` is the profile's reading
    expect(headers).toMatchObject({ 'X-RateLimit-Limit': '0', 'X-RateLimit-Remaining': '0' });
    expect(headers).not.toHaveProperty('Retry-After');
  });

  it('answers with problem details that say no request is allowed', async () => {
    const limiter = build({ limit: 0, window: '1h' });
    const { info } = limited(await limiter.check(CLIENT));
    const rejection = await limiter.rejection(CLIENT, info);
    expect(rejection.status).toBe(429);
    expect(JSON.parse(rejection.body)).toEqual({
      type: QUOTA_EXCEEDED_TYPE,
      title: 'Request cannot be satisfied as assigned quota has been exceeded',
      status: 429,
      detail: "Policy '0-per-1h' allows no requests.",
      'violated-policies': ['0-per-1h'],
    });
  });

  it('still lets skip through, and hands throwOnLimit a RateLimitError', async () => {
    const skipping = build({ limit: 0, skip: (request) => request.ip === '192.0.2.1' });
    expect(await skipping.check({ ip: '192.0.2.1' })).toEqual({ kind: 'skipped' });
    const throwing = await build({ limit: 0, throwOnLimit: true }).check(CLIENT);
    expect(throwing).toMatchObject({ kind: 'error', error: { status: 429 } });
  });

  it('refuses the plans whose limit function returns 0, and limits the others as usual', async () => {
    const memory = new MemoryStore();
    const updates: string[] = [];
    const store: Store = {
      update: (request) => {
        updates.push(request.policies.map((p) => p.name).join());
        return memory.update(request);
      },
      reset: (key, policies) => memory.reset(key, policies),
    };
    const limiter = build({
      limit: (request) => (request.plan === 'pro' ? 2 : 0),
      burst: 5, // sized for the paying plans; a plan of 0 stays at 0
      store,
    });
    const { info } = limited(await limiter.check({ ...CLIENT, plan: 'free' }));
    expect(info.decision.decidedBy).toMatchObject({ policy: '0-per-1m', capacity: 0 });
    const pro = await limiter.check({ ...CLIENT, plan: 'pro' });
    expect(pro).toMatchObject({ kind: 'allowed', info: { decision: { decidedBy: { capacity: 5 } } } });
    expect(updates).toEqual(['2-per-1m']);
  });
});

describe('zeroLimiter', () => {
  it('decides by the store clock it is given, and has nothing to refund or reset', async () => {
    const clock = clockAt(1_700_000_000_000);
    const limiter = zeroLimiter(resolveZeroLimit({ limit: 0, window: '15s' }, ''), clock.now, 'closed');
    expect(limiter.policies).toEqual([
      {
        name: '0-per-15s',
        algorithm: 'token-bucket',
        limit: 0,
        windowMs: 15_000,
        capacity: 0,
        capacityUnits: 0,
      },
    ]);
    expect(await limiter.peek('k', { cost: 3 })).toMatchObject({ cost: 3, decidedAtMs: 1_700_000_000_000 });
    await expect(limiter.refund('k')).resolves.toBeUndefined();
    await expect(limiter.reset('k')).resolves.toBeUndefined();
  });
});

describe('limitOrZero', () => {
  it.each([0, 1, 1000])('takes %j', (value) => {
    expect(limitOrZero(value, 'limit')).toBe(value);
  });

  it.each([-1, 1.5, Number.NaN, '5', null])('refuses %j', (value) => {
    expect(() => limitOrZero(value, 'limit')).toThrow(
      /^limit must be a positive whole number, or 0 to refuse every request; got/,
    );
  });
});
