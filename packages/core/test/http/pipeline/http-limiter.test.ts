import { parseList } from 'structured-headers';
import { describe, expect, it } from 'vitest';
import type { RateLimitInfo, RateLimitOutcome } from '../../../src/http/answer/outcome.js';
import { COST_EXCEEDS_CAPACITY_TYPE, QUOTA_EXCEEDED_TYPE } from '../../../src/http/answer/problem.js';
import { RateLimitError } from '../../../src/http/answer/rate-limit-error.js';
import { ClientAddressError } from '../../../src/http/identity/client-address-error.js';
import { byApiKey } from '../../../src/http/identity/request-keys.js';
import type { RateLimitOptions } from '../../../src/http/options/option-types.js';
import { createHttpLimiter } from '../../../src/http/pipeline/http-limiter.js';
import {
  type FakeRequest,
  failingStore,
  fakeAccess,
  recordingLogger,
  silentStore,
  storeOnClock,
  TEST_ADAPTER,
} from '../fixtures.js';

type Options = RateLimitOptions<FakeRequest>;

/** A client. Spread it (`{ ...CLIENT }`) where warnings are checked: each request is a new object. */
const CLIENT: FakeRequest = { ip: '203.0.113.7' };
const OTHER_CLIENT: FakeRequest = { ip: '198.51.100.9' };

/** An HTTP limiter of 2 per minute over a memory store on a hand-moved clock, logging into arrays. */
function setup(options: Options = {}) {
  const { clock, store } = storeOnClock();
  const { logger, warnings, errors } = recordingLogger();
  const limiter = createHttpLimiter<FakeRequest>(
    { limit: 2, window: '1m', name: 'http-test', store, logger, ...options },
    fakeAccess,
    TEST_ADAPTER,
  );
  return { clock, limiter, warnings, errors };
}

/** `{ policy: { r, t } }` from a draft-10 `RateLimit` header. */
function rateLimitOf(outcome: RateLimitOutcome): Record<string, Record<string, unknown>> {
  expect(outcome.kind).not.toBe('skipped');
  const value = (outcome as { headers: Record<string, string> }).headers.RateLimit as string;
  return Object.fromEntries(parseList(value).map(([name, params]) => [name, Object.fromEntries(params)]));
}

/** The outcome, asserted to be of `kind`. */
function expectKind<K extends RateLimitOutcome['kind']>(outcome: RateLimitOutcome, kind: K) {
  expect(outcome.kind).toBe(kind);
  return outcome as Extract<RateLimitOutcome, { kind: K }>;
}

/** The `info` of a limited request, to hand to `rejection`. */
async function limitedInfo(limiter: ReturnType<typeof setup>['limiter'], request: FakeRequest) {
  await limiter.check(request);
  await limiter.check(request);
  return expectKind(await limiter.check(request), 'limited').info;
}

describe('check', () => {
  it('skips requests for which skip returns true, charging nothing and sending no headers', async () => {
    const { limiter } = setup({ skip: async (request) => request.headers?.['x-internal'] === 'yes' });
    const internal = { ...CLIENT, headers: { 'x-internal': 'yes' } };
    for (let i = 0; i < 3; i++) expect(await limiter.check(internal)).toEqual({ kind: 'skipped' });
    expect(rateLimitOf(await limiter.check(CLIENT))).toEqual({ '2-per-1m': { r: 1, t: 30 } });
  });

  it('allows a request with the headers of its decision and the limiter name', async () => {
    const { limiter } = setup();
    const allowed = expectKind(await limiter.check(CLIENT), 'allowed');
    expect(allowed.headers['RateLimit-Policy']).toBe('"2-per-1m";q=2;w=60');
    expect(rateLimitOf(allowed)).toEqual({ '2-per-1m': { r: 1, t: 30 } });
    expect(allowed.headers).not.toHaveProperty('Retry-After');
    expect(allowed.info.limiter).toBe('http-test');
    expect(limiter.name).toBe('http-test');
    expect(allowed.info.decision).toMatchObject({ allowed: true, cost: 1, reason: 'allowed' });
  });

  it('limits a request past the limit, with Retry-After, and does not charge it', async () => {
    const { clock, limiter } = setup();
    await limiter.check(CLIENT);
    await limiter.check(CLIENT);
    const limited = expectKind(await limiter.check(CLIENT), 'limited');
    expect(limited.headers['Retry-After']).toBe('30');
    // t: the next token, 30 s away (draft-10/11), not the full bucket, 60 s away (draft-09's meaning).
    expect(rateLimitOf(limited)).toEqual({ '2-per-1m': { r: 0, t: 30 } });
    expect(limited.info.decision).toMatchObject({ allowed: false, reason: 'limited', retryAfterMs: 30_000 });
    expect((await limiter.check(OTHER_CLIENT)).kind).toBe('allowed');
    clock.nowMs += 30_000; // one token back: the limited request took none
    expect((await limiter.check(CLIENT)).kind).toBe('allowed');
  });

  it('hands a RateLimitError with the headers and info to the framework with throwOnLimit', async () => {
    const { limiter } = setup({ throwOnLimit: true });
    expect((await limiter.check(CLIENT)).kind).toBe('allowed');
    await limiter.check(CLIENT);
    const outcome = expectKind(await limiter.check(CLIENT), 'error');
    const error = outcome.error as RateLimitError;
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      name: 'RateLimitError',
      message: 'Too Many Requests',
      status: 429,
      statusCode: 429,
      expose: true,
      code: 'TOLLGATE_RATE_LIMITED',
    });
    expect(error.headers).toBe(outcome.headers);
    expect(error.headers['Retry-After']).toBe('30');
    expect(error.info.limiter).toBe('http-test');
    expect(error.info.decision).toMatchObject({ allowed: false, retryAfterMs: 30_000 });
  });

  it('builds its RateLimitError without a stack trace, and leaves the stack trace limit as it was', async () => {
    const { limiter } = setup({ throwOnLimit: true, limit: 1 });
    await limiter.check(CLIENT);
    const before = Error.stackTraceLimit;
    const { error } = expectKind(await limiter.check(CLIENT), 'error');
    expect((error as Error).stack).toBe('RateLimitError: Too Many Requests');
    expect(Error.stackTraceLimit).toBe(before);
    expect(new Error('later').stack).toMatch(/\n\s+at /);
  });

  it('hands a 403 RateLimitError of its own code with throwOnLimit when no wait will do', async () => {
    const { limiter } = setup({ throwOnLimit: true, cost: 3 });
    const outcome = expectKind(await limiter.check(CLIENT), 'error');
    expect(outcome.error).toMatchObject({
      name: 'RateLimitError',
      status: 403,
      statusCode: 403,
      expose: true,
      code: 'TOLLGATE_COST_EXCEEDS_CAPACITY',
    });
    expect(outcome.headers).not.toHaveProperty('Retry-After');
  });

  it('tells adapters the header profile of every outcome with headers', async () => {
    expect(expectKind(await setup().limiter.check(CLIENT), 'allowed').profile).toBe('draft-11');
    expect(expectKind(await setup({ headers: 'draft-6' }).limiter.check(CLIENT), 'allowed').profile).toBe(
      'draft-6',
    );
  });

  it('charges a number cost', async () => {
    const { limiter } = setup({ limit: 5, cost: 2 });
    expect(rateLimitOf(await limiter.check(CLIENT))).toEqual({ '5-per-1m': { r: 3, t: 12 } });
    await limiter.check(CLIENT);
    expect((await limiter.check(CLIENT)).kind).toBe('limited');
  });

  it('charges what an async cost function returns for the request', async () => {
    const { limiter } = setup({
      limit: 5,
      cost: async (request) => Number(request.headers?.['x-batch-size'] ?? 1),
    });
    expect(rateLimitOf(await limiter.check({ ...CLIENT, headers: { 'x-batch-size': '4' } }))).toEqual({
      '5-per-1m': { r: 1, t: 12 },
    });
    expect(rateLimitOf(await limiter.check(CLIENT))).toEqual({ '5-per-1m': { r: 0, t: 12 } });
  });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY, '2', undefined])(
    'rejects the check when the cost function returns %j, without blaming the store',
    async (cost) => {
      const { limiter, errors } = setup({ cost: () => cost as never });
      await expect(limiter.check(CLIENT)).rejects.toThrow(
        new TypeError(`@tollgate/test: the cost function must return a positive number; got ${String(cost)}`),
      );
      expect(errors).toEqual([]);
    },
  );

  it('limits a request whose cost exceeds the capacity, with no Retry-After and without charging', async () => {
    const { limiter } = setup({ cost: (request) => (request.headers?.['x-big'] ? 3 : 1) });
    const limited = expectKind(await limiter.check({ ...CLIENT, headers: { 'x-big': '1' } }), 'limited');
    expect(limited.info.decision.reason).toBe('cost-exceeds-capacity');
    expect(limited.headers).not.toHaveProperty('Retry-After');
    expect(rateLimitOf(await limiter.check(CLIENT))).toEqual({ '2-per-1m': { r: 1, t: 30 } });
  });

  it('keeps a bucket per plan when limit is a function', async () => {
    const { limiter } = setup({ limit: async (request) => (request.plan === 'pro' ? 3 : 1) });
    const free = { ...CLIENT, plan: 'free' } as const;
    const pro = { ...CLIENT, plan: 'pro' } as const;
    const freeFirst = expectKind(await limiter.check(free), 'allowed');
    expect(freeFirst.headers['RateLimit-Policy']).toBe('"1-per-1m";q=1;w=60');
    expect((await limiter.check(free)).kind).toBe('limited');
    const proOutcomes = [await limiter.check(pro), await limiter.check(pro), await limiter.check(pro)];
    expect(proOutcomes.map((outcome) => outcome.kind)).toEqual(['allowed', 'allowed', 'allowed']);
    expect(rateLimitOf(proOutcomes[2] as RateLimitOutcome)).toEqual({ '3-per-1m': { r: 0, t: 20 } });
    expect((await limiter.check(pro)).kind).toBe('limited');
    expect((await limiter.check(free)).kind).toBe('limited');
  });

  it('rejects the check when a limit function returns an invalid limit', async () => {
    const { limiter, errors } = setup({ limit: () => -1 });
    await expect(limiter.check(CLIENT)).rejects.toThrow(
      /limit must be a positive whole number, or 0 .*; got -1/,
    );
    expect(errors).toEqual([]);
  });

  it('rejects the check with the error of a key function that throws', async () => {
    const failure = new Error('session store down');
    const { limiter, errors } = setup({
      key: () => {
        throw failure;
      },
    });
    await expect(limiter.check(CLIENT)).rejects.toBe(failure);
    expect(errors).toEqual([]);
  });

  it('keys by what an async key function resolves to, and rejects with what it rejects with', async () => {
    const failure = new Error('session store down');
    const { limiter } = setup({
      key: async (request) => {
        if (request.plan === 'pro') throw failure;
        return `user:${request.ip}`;
      },
    });
    expect(expectKind(await limiter.check(CLIENT), 'allowed').info.key).toBe(`user:${CLIENT.ip}`);
    await limiter.check(CLIENT);
    expect((await limiter.check(CLIENT)).kind).toBe('limited');
    await expect(limiter.check({ ...CLIENT, plan: 'pro' })).rejects.toBe(failure);
    const thenable = setup({
      // biome-ignore lint/suspicious/noThenProperty: a thenable that is not a Promise, as some libraries return
      key: () => ({ then: (resolve: (key: string) => void) => resolve('') }) as never,
    });
    expect(expectKind(await thenable.limiter.check(CLIENT), 'allowed').info.key).toMatch(/^ip:/);
  });

  // A key function typed loosely (`req.user.id` is often `any`) may return a number. That is a bug in the
  // app, like a bad cost, and must not pass every request unlimited as if the store had failed.
  it('rejects the check when a key function returns a non-string, without blaming the store', async () => {
    const { limiter, errors } = setup({ key: () => 42 as never });
    await expect(limiter.check(CLIENT)).rejects.toThrow(TypeError);
    expect(errors).toEqual([]);
  });

  it('sends only Retry-After with headers: false', async () => {
    const { limiter } = setup({ headers: false });
    expect(expectKind(await limiter.check(CLIENT), 'allowed').headers).toEqual({});
    await limiter.check(CLIENT);
    expect(expectKind(await limiter.check(CLIENT), 'limited').headers).toEqual({ 'Retry-After': '30' });
  });

  it("sends legacy headers with the reset in epoch seconds by the store's clock", async () => {
    const { clock, limiter } = setup({ legacyHeaders: true, headers: 'draft-6' });
    const allowed = expectKind(await limiter.check(CLIENT), 'allowed');
    expect(allowed.headers).toMatchObject({
      'RateLimit-Limit': '2',
      'RateLimit-Remaining': '1',
      'RateLimit-Reset': '30',
      'X-RateLimit-Limit': '2',
      'X-RateLimit-Remaining': '1',
      'X-RateLimit-Reset': String(Math.ceil((clock.nowMs + 30_000) / 1000)),
    });
  });
});

describe('rejection', () => {
  it('answers RFC 9457 problem details by default', async () => {
    const { limiter } = setup();
    const info = await limitedInfo(limiter, CLIENT);
    const rejection = await limiter.rejection(CLIENT, info);
    expect(rejection).toMatchObject({ status: 429, contentType: 'application/problem+json' });
    expect(JSON.parse(rejection.body)).toEqual({
      type: QUOTA_EXCEEDED_TYPE,
      title: 'Request cannot be satisfied as assigned quota has been exceeded',
      status: 429,
      detail: 'Too many requests: retry in 30 seconds.',
      'violated-policies': ['2-per-1m'],
    });
  });

  it('builds each distinct problem answer once, and a new one when what it says changes', async () => {
    const { limiter, clock } = setup();
    const info = await limitedInfo(limiter, CLIENT);
    const first = await limiter.rejection(CLIENT, info);
    const again = await limiter.rejection(CLIENT, expectKind(await limiter.check(CLIENT), 'limited').info);
    expect(again).toBe(first);
    expect(first.bytes.toString()).toBe(first.body);
    clock.nowMs += 10_000;
    const later = await limiter.rejection(CLIENT, expectKind(await limiter.check(CLIENT), 'limited').info);
    expect(JSON.parse(later.body).detail).toBe('Too many requests: retry in 20 seconds.');
    const other = await limiter.rejection(
      { ip: '198.51.100.9' },
      await limitedInfo(limiter, { ip: '198.51.100.9' }),
    );
    expect(JSON.parse(other.body).detail).toBe('Too many requests: retry in 30 seconds.');
  });

  it('answers a string message as plain text', async () => {
    const { limiter } = setup({ message: 'Slow down.' });
    const info = await limitedInfo(limiter, CLIENT);
    expect(await limiter.rejection(CLIENT, info)).toEqual({
      status: 429,
      contentType: 'text/plain; charset=utf-8',
      body: 'Slow down.',
      bytes: Buffer.from('Slow down.'),
    });
  });

  it('answers an object message as JSON', async () => {
    const { limiter } = setup({ message: { error: 'rate_limited', docs: '/limits' } });
    const info = await limitedInfo(limiter, CLIENT);
    const rejection = await limiter.rejection(CLIENT, info);
    expect(rejection).toMatchObject({ status: 429, contentType: 'application/json; charset=utf-8' });
    expect(JSON.parse(rejection.body)).toEqual({ error: 'rate_limited', docs: '/limits' });
  });

  it('answers what a message function returns for the request and its info', async () => {
    const seen: [FakeRequest, RateLimitInfo][] = [];
    const { limiter } = setup({
      message: async (request, info) => {
        seen.push([request, info]);
        return request.plan === 'pro'
          ? { retryInMs: info.decision.retryAfterMs }
          : `Wait ${info.decision.retryAfterMs} ms.`;
      },
    });
    const info = await limitedInfo(limiter, CLIENT);
    expect(await limiter.rejection(CLIENT, info)).toEqual({
      status: 429,
      contentType: 'text/plain; charset=utf-8',
      body: 'Wait 30000 ms.',
      bytes: Buffer.from('Wait 30000 ms.'),
    });
    const pro = { ...CLIENT, plan: 'pro' } as const;
    expect(await limiter.rejection(pro, info)).toEqual({
      status: 429,
      contentType: 'application/json; charset=utf-8',
      body: '{"retryInMs":30000}',
      bytes: Buffer.from('{"retryInMs":30000}'),
    });
    expect(seen).toEqual([
      [CLIENT, info],
      [pro, info],
    ]);
  });

  it('answers 403 cost-exceeds-capacity problem details when no wait will do', async () => {
    const { limiter } = setup({ cost: 5 });
    const limited = expectKind(await limiter.check(CLIENT), 'limited');
    const rejection = await limiter.rejection(CLIENT, limited.info);
    expect(rejection).toMatchObject({ status: 403, contentType: 'application/problem+json' });
    expect(JSON.parse(rejection.body)).toEqual({
      type: COST_EXCEEDS_CAPACITY_TYPE,
      title: 'Request costs more than a quota policy can ever allow',
      status: 403,
      detail: "This request costs 5 tokens, more than policy '2-per-1m' can ever hold (2).",
      'violated-policies': ['2-per-1m'],
      cost: 5,
    });
  });

  it('answers 403 with the message option too when no wait will do', async () => {
    const { limiter } = setup({ cost: 5, message: 'Too big.' });
    const limited = expectKind(await limiter.check(CLIENT), 'limited');
    expect(await limiter.rejection(CLIENT, limited.info)).toEqual({
      status: 403,
      contentType: 'text/plain; charset=utf-8',
      body: 'Too big.',
      bytes: Buffer.from('Too big.'),
    });
  });
});

const NO_ADDRESS =
  'the framework gave no client IP and the key function no identity, so the request was refused with an ' +
  "error: give a key function for such requests (a unix socket has no client IP), or check the framework's " +
  'trusted-proxy setting';

describe('requests without a key', () => {
  it('refuses requests with neither an identity nor an IP with a ClientAddressError, never one shared bucket', async () => {
    const { limiter, warnings } = setup();
    for (let i = 0; i < 4; i++) {
      await expect(limiter.check({ socketIp: '10.0.0.1' })).rejects.toMatchObject({
        name: 'ClientAddressError',
        code: 'TOLLGATE_NO_CLIENT_ADDRESS',
      });
    }
    expect((await limiter.check(CLIENT)).kind).toBe('allowed');
    expect(warnings).toEqual([`[TOLLGATE_MISSING_IP] ${NO_ADDRESS}`]);
  });

  it('limits requests the key function found nothing for by client IP, and warns TOLLGATE_MISSING_KEY once', async () => {
    const { limiter, warnings } = setup({ key: byApiKey({ verify: (key) => key === 'k' }) });
    expect((await limiter.check({ ...CLIENT })).kind).toBe('allowed');
    expect((await limiter.check({ ...CLIENT })).kind).toBe('allowed');
    expect((await limiter.check({ ...CLIENT })).kind).toBe('limited');
    expect((await limiter.check(OTHER_CLIENT)).kind).toBe('allowed'); // one keyless client cannot starve another
    expect((await limiter.check({ ...CLIENT, headers: { 'x-api-key': 'k' } })).kind).toBe('allowed');
    expect(warnings).toEqual([
      '[TOLLGATE_MISSING_KEY] the key function returned nothing; such requests are limited by client IP',
    ]);
  });

  it('treats an empty identity as missing', async () => {
    const { limiter, warnings } = setup({ key: () => '' });
    await limiter.check({ ...CLIENT });
    await limiter.check({ ...CLIENT });
    expect((await limiter.check({ ...CLIENT })).kind).toBe('limited');
    expect((await limiter.check(OTHER_CLIENT)).kind).toBe('allowed');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^\[TOLLGATE_MISSING_KEY\]/);
  });
});

describe('proxy setup warning', () => {
  const forwarded = (ip: string, socketIp: string): FakeRequest => ({
    ip,
    socketIp,
    headers: { 'x-forwarded-for': '198.51.100.9' },
  });

  it('warns TOLLGATE_UNTRUSTED_FORWARDED_FOR once when X-Forwarded-For arrives but was not used', async () => {
    const { limiter, warnings } = setup();
    await limiter.check(forwarded('10.0.0.2', '10.0.0.2'));
    await limiter.check(forwarded('10.0.0.3', '10.0.0.3'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^\[TOLLGATE_UNTRUSTED_FORWARDED_FOR\] X-Forwarded-For arrived/);
    // An adapter that does not say what its setting is called gets neutral words, no framework's.
    expect(warnings[0]).toContain("say so with the framework's trusted-proxy setting.");
  });

  it('does not warn when the framework resolved the client IP from X-Forwarded-For', async () => {
    const { limiter, warnings } = setup();
    await limiter.check(forwarded('198.51.100.9', '10.0.0.2'));
    await limiter.check(forwarded('198.51.100.9', '10.0.0.2'));
    expect(warnings).toEqual([]);
  });

  it('does not warn when the client shares the proxy address, as in a local setup', async () => {
    const { limiter, warnings } = setup();
    const local = {
      ip: '::ffff:127.0.0.1',
      socketIp: '::ffff:127.0.0.1',
      headers: { 'x-forwarded-for': '127.0.0.1' },
    };
    await limiter.check(local);
    expect(warnings).toEqual([]);
    await limiter.check(forwarded('10.0.0.2', '10.0.0.2'));
    expect(warnings).toHaveLength(1); // the check stays armed until it has something to say
  });

  it('does not warn without X-Forwarded-For', async () => {
    const { limiter, warnings } = setup();
    await limiter.check({ ip: '10.0.0.2', socketIp: '10.0.0.2' });
    expect(warnings).toEqual([]);
  });

  it('does not look at skipped requests', async () => {
    const { limiter, warnings } = setup({ skip: () => true });
    await limiter.check(forwarded('10.0.0.2', '10.0.0.2'));
    expect(warnings).toEqual([]);
  });
});

describe('warning switches', () => {
  it('logs no warning and no store error with warnings: false', async () => {
    const { limiter, warnings, errors } = setup({ warnings: false });
    await limiter.check({
      ip: '10.0.0.2',
      socketIp: '10.0.0.2',
      headers: { 'x-forwarded-for': '198.51.100.9' },
    });
    await limiter.check({ ip: '10.0.0.2', socketIp: '10.0.0.2', headers: { 'x-forwarded-for': '1.2.3.4' } });
    await limiter.check({ ip: 'garbage' });
    await expect(limiter.check({})).rejects.toThrow(ClientAddressError);
    const failing = setup({ warnings: false, store: failingStore(new Error('down')) });
    expect((await failing.limiter.check(CLIENT)).kind).toBe('allowed');
    expect([...warnings, ...errors, ...failing.warnings, ...failing.errors]).toEqual([]);
  });

  it('switches off only the codes set to false', async () => {
    const { limiter, warnings } = setup({
      warnings: { TOLLGATE_UNTRUSTED_FORWARDED_FOR: false, TOLLGATE_MISSING_KEY: true },
    });
    await limiter.check({ ip: '10.0.0.2', socketIp: '10.0.0.2', headers: { 'x-forwarded-for': '1.2.3.4' } });
    await expect(limiter.check({})).rejects.toThrow(ClientAddressError);
    expect(warnings).toEqual([`[TOLLGATE_MISSING_IP] ${NO_ADDRESS}`]);
  });

  it('switches off store errors by code', async () => {
    const { limiter, errors } = setup({
      store: failingStore(new Error('down')),
      warnings: { TOLLGATE_STORE_ERROR: false },
    });
    expect((await limiter.check(CLIENT)).kind).toBe('allowed');
    expect(errors).toEqual([]);
  });
});

describe('store failures', () => {
  it('decides on the per-process insurance limiter by default, with headers, and logs once', async () => {
    const store = failingStore(new Error('ECONNREFUSED 127.0.0.1:6379'));
    const { limiter, errors, warnings } = setup({ store });
    const first = expectKind(await limiter.check({ ...CLIENT }), 'allowed');
    expect(first.info.decision.degraded).toBe(true);
    expect(rateLimitOf(first)['2-per-1m']).toMatchObject({ r: 1 });
    expectKind(await limiter.check({ ...CLIENT }), 'allowed');
    const limited = expectKind(await limiter.check({ ...CLIENT }), 'limited');
    expect(limited.headers['Retry-After']).toBe('30');
    expect(store.calls).toBe(3);
    expect(errors).toEqual([
      '[TOLLGATE_STORE_ERROR] rate-limit store failed, requests are limited by the per-process insurance limiter: ECONNREFUSED 127.0.0.1:6379',
    ]);
    expect(warnings).toEqual([]);
  });

  it('divides the insurance limit among instances, and says so in its headers', async () => {
    const { limiter } = setup({
      store: failingStore(new Error('down')),
      limit: 10,
      insurance: { instances: 4 },
    });
    const outcomes: RateLimitOutcome[] = [];
    for (let i = 0; i < 4; i++) outcomes.push(await limiter.check(CLIENT));
    expect(outcomes.map((o) => o.kind)).toEqual(['allowed', 'allowed', 'limited', 'limited']); // 10 / 4 → 2
    // Its headers advertise the insurance's own quota, which is what decided.
    const { headers } = expectKind(outcomes[0] as RateLimitOutcome, 'allowed');
    expect(headers['RateLimit-Policy']).toBe('"10-per-1m";q=2;w=60');
  });

  it("lets the request through without headers with onStoreError: 'allow', logging one line for a run", async () => {
    const store = failingStore(new Error('down'));
    const { limiter, errors } = setup({ store, onStoreError: 'allow' });
    expect(await limiter.check(CLIENT)).toEqual({ kind: 'skipped' });
    expect((await limiter.check(OTHER_CLIENT)).kind).toBe('skipped');
    expect(store.calls).toBe(2);
    expect(errors).toEqual(['[TOLLGATE_STORE_ERROR] rate-limit store failed, requests pass unlimited: down']);
  });

  it.each(['allow', 'deny'] as const)(
    "hands the app's own bug to the framework with onStoreError: '%s', as no store failure",
    async (onStoreError) => {
      const bug = new TypeError('store.update is not a function');
      const { limiter, errors } = setup({ store: failingStore(bug), onStoreError });
      await expect(limiter.check(CLIENT)).rejects.toBe(bug);
      expect(errors).toEqual([]);
    },
  );

  it("hands the store's error to the framework with onStoreError: 'deny'", async () => {
    const failure = new Error('READONLY You cannot write against a read only replica.');
    const { limiter, errors } = setup({ store: failingStore(failure), onStoreError: 'deny' });
    expect(await limiter.check(CLIENT)).toEqual({ kind: 'error', headers: {}, error: failure });
    expect((await limiter.check(CLIENT)) as { error: unknown }).toHaveProperty('error', failure);
    expect(errors).toEqual([
      '[TOLLGATE_STORE_ERROR] rate-limit store failed, requests fail: READONLY You cannot write against a read only replica.',
    ]);
  });

  it('keeps failOpen as the older spelling of allow and deny', async () => {
    const open = setup({ store: failingStore(new Error('down')), failOpen: true });
    expect(await open.limiter.check(CLIENT)).toEqual({ kind: 'skipped' });
    const closed = setup({ store: failingStore(new Error('down')), failOpen: false });
    expect((await closed.limiter.check(CLIENT)).kind).toBe('error');
    expect(() => setup({ failOpen: true, onStoreError: 'allow' })).toThrow(/either onStoreError or failOpen/);
  });

  it('asks an onStoreError function per failure, with the error and the request', async () => {
    const failure = new Error('down');
    const seen: unknown[] = [];
    const { limiter } = setup({
      store: failingStore(failure),
      onStoreError: async (error, request) => {
        seen.push(error);
        return request.headers?.['x-admin'] ? 'allow' : request.ip === CLIENT.ip ? 'deny' : 'insurance';
      },
    });
    expect((await limiter.check({ ...CLIENT, headers: { 'x-admin': '1' } })).kind).toBe('skipped');
    expect((await limiter.check(CLIENT)).kind).toBe('error');
    expect(expectKind(await limiter.check(OTHER_CLIENT), 'allowed').info.decision.degraded).toBe(true);
    expect(seen).toEqual([failure, failure, failure]);
  });

  it('hands a bad answer of the onStoreError function to the framework as the app bug it is', async () => {
    const { limiter } = setup({
      store: failingStore(new Error('down')),
      onStoreError: () => 'open' as never,
    });
    await expect(limiter.check(CLIENT)).rejects.toThrow(/onStoreError function must return/);
  });

  it.each([
    ['open', /onStoreError must be 'insurance', 'allow', 'deny' or a function/],
    [true, /onStoreError must be/],
  ])('rejects onStoreError %j at construction', (value, message) => {
    expect(() => setup({ onStoreError: value as never })).toThrow(message);
  });

  it.each([
    [{ insurance: { instances: 0 } }, /insurance.instances must be a positive whole number/],
    [{ insurance: { instance: 2 } }, /insurance has an unknown field 'instance'/],
    [{ denyCache: true }, /denyCache must be false or an object/],
    [{ denyCache: { maxKeys: -1 } }, /denyCache.maxKeys must be a positive whole number/],
  ])('rejects %j at construction', (options, message) => {
    expect(() => setup(options as never)).toThrow(message);
  });

  it('logs a store failure that is not an Error by its text', async () => {
    const store = { update: () => Promise.reject('NOSCRIPT'), reset: async () => {} };
    const { limiter, errors } = setup({ store, onStoreError: 'allow' });
    expect((await limiter.check(CLIENT)).kind).toBe('skipped');
    expect(errors).toEqual([
      '[TOLLGATE_STORE_ERROR] rate-limit store failed, requests pass unlimited: NOSCRIPT',
    ]);
  });

  it('gives up on a store that does not answer within the timeout, then takes the insurance', async () => {
    const { limiter, errors } = setup({ store: silentStore(), timeout: 20 });
    expect(expectKind(await limiter.check(CLIENT), 'allowed').info.decision.degraded).toBe(true);
    expect(errors).toEqual([
      '[TOLLGATE_STORE_ERROR] rate-limit store failed, requests are limited by the per-process insurance limiter: rate-limit store did not answer within 20 ms',
    ]);
  });

  it("hands the timeout to the framework with onStoreError: 'deny'", async () => {
    const { limiter } = setup({ store: silentStore(), timeout: '20ms', onStoreError: 'deny' });
    const outcome = expectKind(await limiter.check(CLIENT), 'error');
    expect(outcome.error).toBeInstanceOf(Error);
    expect((outcome.error as Error).message).toBe('rate-limit store did not answer within 20 ms');
  });
});
