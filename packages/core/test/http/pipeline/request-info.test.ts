/** The `info` of a checked request: what later code reads, `resetKey`, and the limiter's own `resetKey`. */
import { describe, expect, it } from 'vitest';
import type { RateLimitInfo } from '../../../src/http/answer/outcome.js';
import type { RateLimitOptions } from '../../../src/http/options/option-types.js';
import { createHttpLimiter } from '../../../src/http/pipeline/http-limiter.js';
import {
  type FakeRequest,
  failingStore,
  fakeAccess,
  recordingLogger,
  storeOnClock,
  TEST_ADAPTER,
} from '../fixtures.js';

type Options = RateLimitOptions<FakeRequest>;

const CLIENT: FakeRequest = { ip: '203.0.113.7' };

function setup(options: Options = { burst: 5 }) {
  const { clock, store } = storeOnClock();
  const limiter = createHttpLimiter<FakeRequest>(
    { limit: 3, window: '1m', name: 'info', store, logger: recordingLogger().logger, ...options },
    fakeAccess,
    TEST_ADAPTER,
  );
  const infoOf = async (request: FakeRequest = CLIENT) =>
    (await limiter.check({ ...request })) as { kind: string; info: RateLimitInfo };
  return { clock, limiter, infoOf };
}

describe('the info of a request', () => {
  it("holds the deciding policy's numbers, the key and the decision", async () => {
    const { clock, infoOf } = setup();
    const { info } = await infoOf();
    expect(info).toMatchObject({ limiter: 'info', key: 'ip:203.0.113.7', limit: 3, remaining: 4, used: 1 });
    expect(info.resetMs).toBe(20_000); // one token, at 3 a minute
    expect(info.resetTime).toEqual(new Date(clock.nowMs + 20_000));
    expect(info.decision).toMatchObject({ allowed: true, cost: 1 });
    expect(JSON.parse(JSON.stringify(info))).toEqual({
      limiter: 'info',
      key: 'ip:203.0.113.7',
      limit: 3,
      remaining: 4,
      used: 1,
      resetMs: 20_000,
      resetTime: new Date(clock.nowMs + 20_000).toISOString(),
    });
  });

  it('resets its own key, and only that', async () => {
    const { infoOf } = setup();
    for (let i = 0; i < 4; i++) await infoOf();
    await infoOf({ ip: '198.51.100.1' });
    const { info } = await infoOf();
    expect(info.remaining).toBe(0);
    await info.resetKey();
    expect((await infoOf()).info.remaining).toBe(4);
    expect((await infoOf({ ip: '198.51.100.1' })).info.remaining).toBe(3);
  });

  it('rejects a reset the store fails, rather than pretend', async () => {
    const store = { ...failingStore(new Error('down')), reset: () => Promise.reject(new Error('down')) };
    const { infoOf } = setup({ burst: 5, store });
    const { info } = await infoOf();
    expect(info.decision.degraded).toBe(true);
    await expect(info.resetKey()).rejects.toThrow('down');
  });
});

describe('resetKey of the limiter', () => {
  it('refills a key given as the key function names it', async () => {
    const { limiter, infoOf } = setup();
    for (let i = 0; i < 5; i++) await infoOf();
    expect((await infoOf()).kind).toBe('limited');
    await limiter.resetKey('ip:203.0.113.7');
    expect((await infoOf()).kind).toBe('allowed');
  });

  it('refills the key under every per-plan limit seen so far', async () => {
    const { limiter, infoOf } = setup({ limit: (request) => (request.plan === 'pro' ? 2 : 1) });
    const pro = { ...CLIENT, plan: 'pro' } as const;
    await infoOf();
    await infoOf(pro);
    await infoOf(pro);
    expect([(await infoOf()).kind, (await infoOf(pro)).kind]).toEqual(['limited', 'limited']);
    await limiter.resetKey('ip:203.0.113.7');
    expect([(await infoOf()).kind, (await infoOf(pro)).kind]).toEqual(['allowed', 'allowed']);
  });
});

describe('requestPropertyName', () => {
  it("is 'rateLimit' by default, the name given, or undefined for false", () => {
    expect(setup().limiter.requestPropertyName).toBe('rateLimit');
    expect(setup({ requestPropertyName: 'loginLimit' }).limiter.requestPropertyName).toBe('loginLimit');
    expect(setup({ requestPropertyName: false }).limiter.requestPropertyName).toBeUndefined();
  });

  it.each(['', 'rate-limit', '__proto__', 'constructor', true, 5])('rejects %j at construction', (name) => {
    expect(() => setup({ requestPropertyName: name as never })).toThrow(
      /requestPropertyName must be a property name like 'rateLimit', or false; got /,
    );
  });
});
