/** `statusCode`, `addHeaders` and `addHeadersOnExceeding` on the core: what a limited or allowed answer carries. */
import { describe, expect, it } from 'vitest';
import type { RateLimitInfo, RateLimitOutcome } from '../../../src/http/answer/outcome.js';
import { QUOTA_EXCEEDED_TYPE } from '../../../src/http/answer/problem.js';
import type { RateLimitError } from '../../../src/http/answer/rate-limit-error.js';
import type { RateLimitOptions } from '../../../src/http/options/option-types.js';
import { createHttpLimiter } from '../../../src/http/pipeline/http-limiter.js';
import { type FakeRequest, fakeAccess, storeOnClock, TEST_ADAPTER } from '../fixtures.js';

type Options = RateLimitOptions<FakeRequest>;

const CLIENT: FakeRequest = { ip: '203.0.113.7' };

function setup(options: Options) {
  const { store } = storeOnClock();
  return createHttpLimiter<FakeRequest>(
    { limit: 1, window: '1m', name: 'answers', store, ...options },
    fakeAccess,
    TEST_ADAPTER,
  );
}

const headersOf = (outcome: RateLimitOutcome) => Object.keys((outcome as { headers: object }).headers);

describe('statusCode', () => {
  it('answers a limited request with it, in the problem details too', async () => {
    const limiter = setup({ statusCode: 503 });
    await limiter.check({ ...CLIENT });
    const limited = await limiter.check({ ...CLIENT });
    const rejection = await limiter.rejection(CLIENT, (limited as { info: RateLimitInfo }).info);
    expect(rejection.status).toBe(503);
    expect(JSON.parse(rejection.body)).toMatchObject({ type: QUOTA_EXCEEDED_TYPE, status: 503 });
  });

  it('gives the RateLimitError of throwOnLimit the same status and the usual code', async () => {
    const limiter = setup({ statusCode: 503, throwOnLimit: true });
    await limiter.check({ ...CLIENT });
    const outcome = await limiter.check({ ...CLIENT });
    const error = (outcome as { error: RateLimitError }).error;
    expect([error.status, error.statusCode, error.code]).toEqual([503, 503, 'TOLLGATE_RATE_LIMITED']);
  });

  it('leaves a cost beyond capacity at 403, which no wait can change', async () => {
    const limiter = setup({ statusCode: 503, cost: 2 });
    const outcome = await limiter.check({ ...CLIENT });
    expect((await limiter.rejection(CLIENT, (outcome as { info: RateLimitInfo }).info)).status).toBe(403);
  });

  it.each([200, 429.5, 600, '429'])('rejects %j at construction', (statusCode) => {
    expect(() => setup({ statusCode: statusCode as never })).toThrow(
      `@tollgate/test: statusCode must be a whole number from 400 to 599; got ${statusCode}`,
    );
  });
});

describe('addHeaders and addHeadersOnExceeding', () => {
  it('switch Retry-After off on limited answers, and only there', async () => {
    const limiter = setup({ addHeaders: { 'retry-after': false }, legacyHeaders: true });
    expect(headersOf(await limiter.check({ ...CLIENT }))).toEqual([
      'RateLimit-Policy',
      'RateLimit',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
    ]);
    expect(headersOf(await limiter.check({ ...CLIENT }))).not.toContain('Retry-After');
  });

  it('switch headers of allowed answers off without touching limited ones', async () => {
    const limiter = setup({
      legacyHeaders: true,
      addHeadersOnExceeding: { 'ratelimit-policy': false, 'x-ratelimit-reset': false },
    });
    expect(headersOf(await limiter.check({ ...CLIENT }))).toEqual([
      'RateLimit',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
    ]);
    expect(headersOf(await limiter.check({ ...CLIENT }))).toContain('RateLimit-Policy');
  });

  it('switch the draft-6 fields off by their own names', async () => {
    const limiter = setup({
      headers: 'draft-6',
      addHeaders: { 'ratelimit-reset': false, 'retry-after': true },
    });
    await limiter.check({ ...CLIENT });
    expect(headersOf(await limiter.check({ ...CLIENT }))).toEqual([
      'RateLimit-Policy',
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'Retry-After',
    ]);
  });

  it.each([
    [
      { addHeaders: { 'retry-afer': false } },
      "addHeaders has an unknown header 'retry-afer'; did you mean retry-after?",
    ],
    [
      { addHeadersOnExceeding: { 'retry-after': false } },
      "addHeadersOnExceeding has an unknown header 'retry-after'",
    ],
    [{ addHeaders: { 'retry-after': 'no' } }, "addHeaders['retry-after'] must be true or false; got no"],
    [{ addHeaders: false }, 'addHeaders must be an object of header switches'],
  ])('rejects %j at construction', (options, message) => {
    expect(() => setup(options as never)).toThrow(message);
  });
});
