/**
 * The adapter scenario table: each scenario describes an app and the requests it gets, and runs unchanged
 * on every framework driver and store. Same input, same headers and bodies, in all three frameworks.
 */
import { randomBytes } from 'node:crypto';
import {
  byApiKey,
  byIp,
  byUser,
  COST_EXCEEDS_CAPACITY_TYPE,
  createLimiter,
  firstOf,
  QUOTA_EXCEEDED_TYPE,
  type Store,
} from '@tollgate/core';
import { expect } from 'vitest';
import type { ManualClock } from '../harness/manual-clock.js';
import type { ManualSleep } from '../harness/manual-sleeps.js';
import type { AppSpec, RequestReader, TestApp } from './app-spec.js';
import { delayScenarios } from './delay-scenarios.js';
import { draft7, draft10, jsonBody, parseRateLimitFields, retryAfterSeconds } from './parse-headers.js';
import { peerScenarios } from './peer-scenarios.js';

export interface ScenarioContext {
  readonly clock: ManualClock;
  /** The sleeps limiters with `delay` started, in order: each ends when the scenario wakes it. */
  readonly sleeps: readonly ManualSleep[];
  /** Lines the limiters logged, warnings and errors alike. */
  readonly logged: string[];
  /** The Redis keys the scenario's store wrote, when the store is Redis. */
  readonly storedKeys?: () => Promise<string[]>;
  /** Waits for what the responses so far set off in the store after they ended (refunds). */
  readonly idle: () => Promise<void>;
  /** The scenario's store, as the app's limiters have it: another app server may share it. */
  readonly store: Store;
}

export interface AdapterScenario {
  readonly name: string;
  spec(read: RequestReader): AppSpec;
  run(app: TestApp, context: ScenarioContext): Promise<void>;
}

/** The API keys the app issued; anything else is made up. */
const ISSUED_KEYS = new Set(['sk_live_alpha', 'sk_live_beta', 'sk_live_gamma']);

/** Plans by user id, as an account database would hold them. */
const PLANS: Record<string, 'pro' | 'free'> = { paying: 'pro', free: 'free' };

async function statuses(app: TestApp, count: number, path = '/a', headers: Record<string, string> = {}) {
  const codes: number[] = [];
  for (let i = 0; i < count; i++) codes.push((await app.send('GET', path, headers)).status);
  return codes;
}

export const adapterScenarios: AdapterScenario[] = [
  {
    name: 'allows up to the limit, then answers 429 with problem details and Retry-After',
    spec: () => ({ global: { limit: 3, window: '1m', name: 'site' } }),
    async run(app) {
      for (const remaining of [2, 1, 0]) {
        const ok = await app.send('GET', '/a');
        expect(ok.status).toBe(200);
        // t: the seconds until r grows, one token every 20 s (not until the bucket is full: draft-09's t).
        expect(draft10(ok, 'ratelimit')).toEqual({ '3-per-1m': { r: remaining, t: 20 } });
        expect(draft10(ok, 'ratelimit-policy')).toEqual({ '3-per-1m': { q: 3, w: 60 } });
        expect(retryAfterSeconds(ok)).toBeUndefined();
      }
      const limited = await app.send('GET', '/b');
      expect(limited.status).toBe(429);
      expect(retryAfterSeconds(limited)).toBe(20); // one token every 60 s / 3
      expect(draft10(limited, 'ratelimit')).toEqual({ '3-per-1m': { r: 0, t: 20 } });
      expect(limited.headers['content-type']).toBe('application/problem+json'); // RFC 9457 has no charset
      expect(jsonBody(limited)).toMatchObject({
        type: QUOTA_EXCEEDED_TYPE,
        status: 429,
        'violated-policies': ['3-per-1m'],
        detail: 'Too many requests: retry in 20 seconds.',
      });
    },
  },
  {
    name: 'a refused HEAD request gets the 429 and its headers, and no body',
    spec: () => ({ global: { limit: 1, window: '1m' } }),
    async run(app) {
      expect((await app.send('HEAD', '/a')).status).toBe(200);
      const limited = await app.send('HEAD', '/a');
      expect(limited.status).toBe(429);
      expect(retryAfterSeconds(limited)).toBe(60);
      expect(limited.headers['content-type']).toBe('application/problem+json');
      expect(limited.body).toBe('');
      // …while a GET's refusal carries the body whose length a HEAD's announces.
      const got = await app.send('GET', '/a');
      expect(Number(limited.headers['content-length'])).toBe(Buffer.byteLength(got.body));
    },
  },
  {
    name: 'Retry-After is honest: waiting it out is enough, waiting less is not',
    spec: () => ({ global: { limit: 1, window: '10s' } }),
    async run(app, { clock }) {
      expect(await statuses(app, 2)).toEqual([200, 429]);
      clock.advance(9_999);
      const early = await app.send('GET', '/a');
      expect(early.status).toBe(429);
      expect(retryAfterSeconds(early)).toBe(1); // 1 ms left, rounded up
      clock.advance(1);
      expect((await app.send('GET', '/a')).status).toBe(200);
    },
  },
  {
    name: 'a per-route limit applies to its route only',
    spec: () => ({
      global: { limit: 10, window: '1m' },
      routes: [{ method: 'POST', path: '/login', limit: { limit: 2, window: '15m' } }],
    }),
    async run(app) {
      const logins = [];
      for (let i = 0; i < 3; i++) logins.push(await app.send('POST', '/login'));
      expect(logins.map((r) => r.status)).toEqual([200, 200, 429]);
      // Express and Koa stack the route's limiter on the app-wide one and report both; Fastify's replaces it.
      expect(draft10(logins[2] as never, 'ratelimit-policy')).toMatchObject({
        '2-per-15m': { q: 2, w: 900 },
      });
      expect(retryAfterSeconds(logins[2] as never)).toBe(450);
      expect((await app.send('GET', '/a')).status).toBe(200);
    },
  },
  {
    name: 'a route opted out is never limited and gets no headers',
    spec: () => ({
      global: { limit: 1, window: '1h' },
      routes: [{ method: 'GET', path: '/health', limit: false }],
    }),
    async run(app) {
      for (let i = 0; i < 5; i++) {
        const response = await app.send('GET', '/health');
        expect(response.status).toBe(200);
        expect(response.headers.ratelimit).toBeUndefined();
      }
      expect(await statuses(app, 2)).toEqual([200, 429]);
    },
  },
  {
    name: 'several policies are charged together and all are reported',
    spec: () => ({
      global: {
        policies: [
          { limit: 2, window: '1s', name: 'burst' },
          { limit: 3, window: '1h', name: 'hourly' },
        ],
      },
    }),
    async run(app, { clock }) {
      expect(await statuses(app, 2)).toEqual([200, 200]);
      const byBurst = await app.send('GET', '/a');
      expect(byBurst.status).toBe(429);
      expect(draft10(byBurst, 'ratelimit-policy')).toEqual({
        burst: { q: 2, w: 1 },
        hourly: { q: 3, w: 3600 },
      });
      // hourly's next token is 20 minutes away (the bucket is full in 40: draft-09's t).
      expect(draft10(byBurst, 'ratelimit')).toEqual({ burst: { r: 0, t: 1 }, hourly: { r: 1, t: 1200 } });
      expect(jsonBody(byBurst)['violated-policies']).toEqual(['burst']);
      clock.advance(1000);
      expect(await statuses(app, 2)).toEqual([200, 429]); // hourly had one left; burst was not charged for the 429
      const byHourly = await app.send('GET', '/a');
      expect(jsonBody(byHourly)['violated-policies']).toEqual(['hourly']);
      expect(retryAfterSeconds(byHourly)).toBe(1199); // 20 min per token, 1 s of it refilled
    },
  },
  {
    name: 'skip lets requests through uncounted and without headers',
    spec: (read) => ({
      global: { limit: 1, window: '1h', skip: (req) => read.header(req, 'x-internal') === 'yes' },
    }),
    async run(app) {
      for (let i = 0; i < 3; i++) {
        const skipped = await app.send('GET', '/a', { 'x-internal': 'yes' });
        expect(skipped.status).toBe(200);
        expect(skipped.headers.ratelimit).toBeUndefined();
      }
      expect(await statuses(app, 2)).toEqual([200, 429]);
    },
  },
  {
    name: 'cost from the request charges several tokens; a cost beyond capacity is a 403 of its own type without Retry-After',
    spec: (read) => ({
      global: { limit: 5, window: '1m', cost: async (req) => Number(read.header(req, 'x-cost') ?? 1) },
    }),
    async run(app) {
      const first = await app.send('GET', '/a', { 'x-cost': '3' });
      expect(draft10(first, 'ratelimit')['5-per-1m']).toMatchObject({ r: 2 });
      const second = await app.send('GET', '/a', { 'x-cost': '3' });
      expect(second.status).toBe(429);
      expect(retryAfterSeconds(second)).toBe(12); // 1 token short at 5 per minute
      const tooBig = await app.send('GET', '/a', { 'x-cost': '6' });
      expect(tooBig.status).toBe(403); // no wait will do: not "too many requests"
      expect(retryAfterSeconds(tooBig)).toBeUndefined();
      expect(tooBig.headers['content-type']).toBe('application/problem+json');
      expect(jsonBody(tooBig)).toMatchObject({
        type: COST_EXCEEDS_CAPACITY_TYPE,
        status: 403,
        cost: 6,
        'violated-policies': ['5-per-1m'],
      });
      expect(jsonBody(tooBig).detail).toMatch(/costs 6 tokens, more than .* can ever hold \(5\)/);
      expect((await app.send('GET', '/a', { 'x-cost': '2' })).status).toBe(200);
    },
  },
  {
    name: 'IPv6 clients are grouped by /56; IPv4-mapped addresses count as IPv4',
    spec: () => ({ trustProxy: true, global: { limit: 1, window: '1h' } }),
    async run(app) {
      const from = (ip: string) => app.send('GET', '/a', { 'x-forwarded-for': ip });
      expect((await from('2001:db8:1:100::1')).status).toBe(200);
      expect((await from('2001:db8:1:1ff:ffff::2')).status).toBe(429); // same /56
      expect((await from('2001:db8:1:200::1')).status).toBe(200); // next /56
      expect((await from('203.0.113.7')).status).toBe(200);
      expect((await from('::ffff:203.0.113.7')).status).toBe(429); // the same IPv4 client
    },
  },
  {
    name: 'with trusted proxies, each forwarded client has its own bucket',
    spec: () => ({ trustProxy: true, global: { limit: 1, window: '1h' } }),
    async run(app, { logged }) {
      for (const ip of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) {
        expect((await app.send('GET', '/a', { 'x-forwarded-for': ip })).status).toBe(200);
      }
      expect((await app.send('GET', '/a', { 'x-forwarded-for': '198.51.100.1' })).status).toBe(429);
      expect(logged.join('\n')).not.toContain('TOLLGATE_UNTRUSTED_FORWARDED_FOR');
      // Express 'trust proxy' true, Fastify trustProxy: true, Koa app.proxy without maxIpsCount: warned once.
      expect(logged.filter((line) => line.startsWith('[TOLLGATE_PERMISSIVE_TRUST_PROXY]'))).toHaveLength(1);
    },
  },
  {
    name: 'without trusted proxies, a spoofed X-Forwarded-For does not buy a new bucket, and is warned about once',
    spec: () => ({ trustProxy: false, global: { limit: 1, window: '1h' } }),
    async run(app, { logged }) {
      expect((await app.send('GET', '/a', { 'x-forwarded-for': '198.51.100.1' })).status).toBe(200);
      expect((await app.send('GET', '/a', { 'x-forwarded-for': '198.51.100.2' })).status).toBe(429);
      expect((await app.send('GET', '/a', { 'x-forwarded-for': '198.51.100.3' })).status).toBe(429);
      expect(logged.filter((line) => line.includes('[TOLLGATE_UNTRUSTED_FORWARDED_FOR]'))).toHaveLength(1);
    },
  },
  {
    name: 'API keys have buckets of their own and are stored only as hashes',
    spec: () => ({
      global: {
        limit: 1,
        window: '1h',
        key: firstOf(
          byApiKey({ header: 'authorization', verify: (key) => ISSUED_KEYS.has(key) }),
          byApiKey({ verify: async (key) => ISSUED_KEYS.has(key) }),
        ),
      },
    }),
    async run(app, { storedKeys }) {
      const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
      expect((await app.send('GET', '/a', bearer('sk_live_alpha'))).status).toBe(200);
      expect((await app.send('GET', '/a', bearer('sk_live_alpha'))).status).toBe(429);
      expect((await app.send('GET', '/a', bearer('sk_live_beta'))).status).toBe(200);
      expect((await app.send('GET', '/a', { 'x-api-key': 'sk_live_gamma' })).status).toBe(200);
      const keys = (await storedKeys?.())?.join('\n') ?? '';
      for (const secret of ['sk_live_alpha', 'sk_live_beta', 'sk_live_gamma'])
        expect(keys).not.toContain(secret);
    },
  },
  {
    name: 'users are limited by id; requests without one share a bucket and are warned about',
    spec: (read) => ({ global: { limit: 1, window: '1h', key: firstOf(byUser((req) => read.userId(req))) } }),
    async run(app, { logged }) {
      expect((await app.send('GET', '/a', { 'x-user': 'ada' })).status).toBe(200);
      expect((await app.send('GET', '/a', { 'x-user': 'ada' })).status).toBe(429);
      expect((await app.send('GET', '/a', { 'x-user': 'grace' })).status).toBe(200);
      // No user and no fallback: one shared bucket, and a warning that says so.
      expect(await statuses(app, 2)).toEqual([200, 429]);
      expect(logged.filter((line) => line.includes('[TOLLGATE_MISSING_KEY]'))).toHaveLength(1);
    },
  },
  {
    name: 'limit as a function of the request gives each plan its own limit, from the server-side account',
    spec: (read) => ({
      global: {
        // The plan comes from what authentication put on the request, never from a header the client writes.
        limit: (req) => (PLANS[read.userId(req) ?? ''] === 'pro' ? 3 : 1),
        window: '1h',
        key: firstOf(
          byUser((req) => read.userId(req)),
          byIp(),
        ),
      },
    }),
    async run(app) {
      expect(await statuses(app, 4, '/a', { 'x-user': 'paying' })).toEqual([200, 200, 200, 429]);
      expect(await statuses(app, 2, '/a', { 'x-user': 'free', 'x-plan': 'pro' })).toEqual([200, 429]);
      expect(await statuses(app, 2, '/b', { 'x-plan': 'pro' })).toEqual([200, 429]);
    },
  },
  {
    name: 'a custom message replaces the problem details',
    spec: () => ({ global: { limit: 1, window: '1h', message: 'Slow down, please.' } }),
    async run(app) {
      await app.send('GET', '/a');
      const limited = await app.send('GET', '/a');
      expect(limited.status).toBe(429);
      expect(limited.headers['content-type']).toMatch(/^text\/plain/);
      expect(limited.body).toBe('Slow down, please.');
      expect(retryAfterSeconds(limited)).toBe(3600);
    },
  },
  {
    name: "throwOnLimit hands a 429 error to the framework's error handling, headers included",
    spec: () => ({ global: { limit: 1, window: '1h', throwOnLimit: true } }),
    async run(app) {
      await app.send('GET', '/a');
      const limited = await app.send('GET', '/a');
      expect(limited.status).toBe(429);
      expect(retryAfterSeconds(limited)).toBe(3600);
      expect(draft10(limited, 'ratelimit')).toEqual({ '1-per-1h': { r: 0, t: 3600 } });
    },
  },
  {
    name: 'header profiles: draft-7 with legacy X-RateLimit-*',
    spec: () => ({ global: { limit: 2, window: '1m', headers: 'draft-7', legacyHeaders: true } }),
    async run(app, { clock }) {
      const ok = await app.send('GET', '/a');
      expect(draft7(ok)).toEqual({ limit: 2, remaining: 1, reset: 30 });
      expect(ok.headers['ratelimit-policy']).toBe('2;w=60');
      expect(ok.headers['x-ratelimit-limit']).toBe('2');
      expect(ok.headers['x-ratelimit-remaining']).toBe('1');
      expect(ok.headers['x-ratelimit-reset']).toBe(String(Math.ceil((clock.now() + 30_000) / 1000)));
    },
  },
  {
    name: 'header profiles: draft-6, and none at all',
    spec: () => ({
      routes: [
        { method: 'GET', path: '/six', limit: { limit: 2, window: '1m', headers: 'draft-6' } },
        { method: 'GET', path: '/quiet', limit: { limit: 1, window: '1m', headers: false } },
      ],
    }),
    async run(app) {
      const ok = await app.send('GET', '/six');
      expect(ok.headers).toMatchObject({
        'ratelimit-limit': '2',
        'ratelimit-remaining': '1',
        'ratelimit-reset': '30',
        'ratelimit-policy': '2;w=60',
      });
      expect(ok.headers.ratelimit).toBeUndefined();
      await app.send('GET', '/quiet');
      const quiet = await app.send('GET', '/quiet');
      expect(quiet.status).toBe(429);
      expect(Object.keys(quiet.headers).filter((h) => h.startsWith('ratelimit'))).toEqual([]);
      expect(retryAfterSeconds(quiet)).toBe(60); // Retry-After is not a profile: every 429 has it
    },
  },
  {
    name: 'limiters with equal options do not share buckets unless they share a name',
    spec: () => ({
      routes: [
        { method: 'GET', path: '/one', limit: { limit: 1, window: '1h' } },
        { method: 'GET', path: '/two', limit: { limit: 1, window: '1h' } },
        { method: 'GET', path: '/shared-1', limit: { limit: 1, window: '1h', name: 'shared' } },
        { method: 'GET', path: '/shared-2', limit: { limit: 1, window: '1h', name: 'shared' } },
      ],
    }),
    async run(app) {
      expect((await app.send('GET', '/one')).status).toBe(200);
      expect((await app.send('GET', '/two')).status).toBe(200);
      expect((await app.send('GET', '/shared-1')).status).toBe(200);
      expect((await app.send('GET', '/shared-2')).status).toBe(429);
    },
  },
  {
    // The bug: with firstOf(byApiKey(), byIp()) every made-up key got a fresh bucket, so a limited client
    // (or a key guesser) went on unlimited by sending a new key each time.
    name: 'made-up API keys from a limited IP are refused: 50 random keys under the documented setup',
    spec: () => ({
      global: {
        limit: 2,
        window: '1h',
        key: firstOf(byApiKey({ verify: async (key) => ISSUED_KEYS.has(key) }), byIp()),
      },
    }),
    async run(app, { storedKeys }) {
      expect(await statuses(app, 3)).toEqual([200, 200, 429]);
      const made_up = Array.from({ length: 50 }, () => `sk_live_${randomBytes(12).toString('hex')}`);
      for (const key of made_up) expect((await app.send('GET', '/a', { 'x-api-key': key })).status).toBe(429);
      // An issued key has a bucket of its own, from the same IP.
      expect((await app.send('GET', '/a', { 'x-api-key': 'sk_live_alpha' })).status).toBe(200);
      const keys = (await storedKeys?.())?.join('\n') ?? '';
      for (const key of made_up) expect(keys).not.toContain(key);
    },
  },
  {
    // The bug: an app-wide draft-10 limiter and a route's draft-6 one sent `RateLimit-Policy: 2;w=10`
    // beside the draft-10 `RateLimit` list: a pair that describes no one policy, which draft-10 parsers reject.
    name: 'a limiter of another header profile on the same response replaces the fields: one profile per response',
    spec: () => ({
      global: { limit: 10, window: '1m', headers: 'draft-10', name: 'site' },
      routes: [{ method: 'GET', path: '/six', limit: { limit: 2, window: '10s', headers: 'draft-6' } }],
    }),
    async run(app) {
      const six = await app.send('GET', '/six');
      expect(six.status).toBe(200);
      expect(parseRateLimitFields(six)).toEqual({
        'ratelimit-policy': { '2': { w: 10 } },
        'ratelimit-limit': 2,
        'ratelimit-remaining': 1,
        'ratelimit-reset': 5,
      });
      await app.send('GET', '/six');
      const limited = await app.send('GET', '/six');
      expect(limited.status).toBe(429);
      expect(limited.headers.ratelimit).toBeUndefined();
      expect(limited.headers['ratelimit-reset']).toBe(limited.headers['retry-after']);
      expect(draft10(await app.send('GET', '/a'), 'ratelimit-policy')).toEqual({
        '10-per-1m': { q: 10, w: 60 },
      });
    },
  },
  {
    name: 'a window below a second is advertised as a quota true over a whole second, with the capacity',
    // A burst of 40: on Redis, whose expiry runs on real time while the test's clock is manual, an empty
    // bucket is then kept 2 s of real time between two steps.
    spec: () => ({ global: { limit: 10, window: '500ms', burst: 40 } }),
    async run(app, { clock, storedKeys }) {
      const first = await app.send('GET', '/a');
      // 10 per 500 ms is 20 per second, in buckets of 40: not q=10;w=1.
      expect(draft10(first, 'ratelimit-policy')).toEqual({
        '10-per-500ms': { q: 20, w: 1, 'tollgate-burst': 40 },
      });
      expect(draft10(first, 'ratelimit')).toEqual({ '10-per-500ms': { r: 39, t: 1 } });
      let burst = 1;
      while ((await app.send('GET', '/a')).status === 200) burst++;
      // A bucket one token short of full is 50 ms from full, and Redis keeps it that long in real time:
      // on a loaded machine the second request may find it gone (full again), one more token for the burst.
      expect(storedKeys ? [40, 41] : [40]).toContain(burst);
      let refilled = 0;
      for (let step = 0; step < 19; step++) {
        clock.advance(50);
        while ((await app.send('GET', '/a')).status === 200) refilled++;
      }
      expect(refilled).toBe(19); // 20 a second: one token every 50 ms
    },
  },
  {
    name: 'throwOnLimit hands a cost beyond capacity to error handling as a 403',
    spec: () => ({ global: { limit: 2, window: '1h', cost: 3, throwOnLimit: true } }),
    async run(app) {
      const refused = await app.send('GET', '/a');
      expect(refused.status).toBe(403);
      expect(retryAfterSeconds(refused)).toBeUndefined();
      expect(draft10(refused, 'ratelimit')).toEqual({ '2-per-1h': { r: 2, t: 1800 } });
    },
  },
  {
    name: "draft-7 and draft-6 reset is Retry-After's point in time on a 429",
    spec: () => ({
      routes: [
        { method: 'GET', path: '/seven', limit: { limit: 3, window: '1m', headers: 'draft-7' } },
        { method: 'GET', path: '/six', limit: { limit: 3, window: '1m', headers: 'draft-6' } },
      ],
    }),
    async run(app) {
      for (const path of ['/seven', '/six']) {
        await statuses(app, 3, path);
        const limited = await app.send('GET', path);
        expect(limited.status).toBe(429);
        const fields = parseRateLimitFields(limited);
        const reset =
          path === '/seven' ? (fields.ratelimit as { reset: number }).reset : fields['ratelimit-reset'];
        expect(reset).toBe(20); // not 60, when the bucket is full again
        expect(retryAfterSeconds(limited)).toBe(20);
      }
    },
  },
  {
    name: "algorithm: 'fixed-window' admits the limit per window from the first request; t is the window's end",
    spec: () => ({ global: { limit: 3, window: '1m', algorithm: 'fixed-window', name: 'fixed' } }),
    async run(app, { clock }) {
      expect(await statuses(app, 3)).toEqual([200, 200, 200]);
      clock.advance(30_000); // a token bucket would have refilled 1.5 tokens by now
      const limited = await app.send('GET', '/a');
      expect(limited.status).toBe(429);
      expect(draft10(limited, 'ratelimit')).toEqual({ '3-per-1m': { r: 0, t: 30 } });
      expect(retryAfterSeconds(limited)).toBe(30);
      clock.advance(30_000);
      expect(await statuses(app, 4)).toEqual([200, 200, 200, 429]);
    },
  },
  {
    name: "algorithm: 'sliding-window' counts the previous window by how much of it still slides",
    spec: () => ({ global: { limit: 4, window: '10s', algorithm: 'sliding-window', name: 'sliding' } }),
    async run(app, { clock }) {
      clock.set(1_767_225_600_000); // the start of a window: sliding windows are aligned to the clock
      expect(await statuses(app, 5)).toEqual([200, 200, 200, 200, 429]);
      clock.advance(15_000); // halfway into the next window: half of the previous 4 still counts
      expect(await statuses(app, 3)).toEqual([200, 200, 429]);
    },
  },
  {
    name: 'ban: a client refused twice in a row is refused outright, Retry-After the time left',
    spec: () => ({ global: { limit: 1, window: '1m', name: 'banning', ban: { after: 2, duration: '10m' } } }),
    async run(app, { clock }) {
      expect((await app.send('GET', '/a')).status).toBe(200);
      const limited = await app.send('GET', '/a');
      expect([limited.status, retryAfterSeconds(limited)]).toEqual([429, 60]);
      const banned = await app.send('GET', '/a');
      expect([banned.status, retryAfterSeconds(banned)]).toEqual([429, 600]);
      expect(jsonBody(banned)).toMatchObject({
        detail: 'Too many requests after being limited: banned, retry in 600 seconds.',
      });
      clock.advance(60_000); // the bucket has a token again; the ban holds
      expect(retryAfterSeconds(await app.send('GET', '/a'))).toBe(540);
      clock.advance(540_000);
      expect((await app.send('GET', '/a')).status).toBe(200);
    },
  },
  {
    name: 'overrides: another server raises one client’s limit; its next request and its headers show it',
    spec: () => ({ global: { policies: [METERED], name: 'api', overrides: true } }),
    async run(app, { store, clock }) {
      // Another app server, on the same store: the same limiter name and policies.
      const other = createLimiter({ store, namespace: 'api', policies: [METERED], overrides: true });
      expect(await statuses(app, 3)).toEqual([200, 200, 429]);
      await other.setOverride('ip:127.0.0.1', 4, { ttl: '30s' });
      const raised = await app.send('GET', '/a');
      expect(raised.status).toBe(200);
      expect(raised.headers['ratelimit-policy']).toBe('"metered";q=4;w=60');
      expect(raised.headers.ratelimit).toBe('"metered";r=1;t=60');
      expect(await statuses(app, 2)).toEqual([200, 429]);
      clock.advance(30_000); // the override is over: 2 a minute again, the 4 used this window counted
      const after = await app.send('GET', '/a');
      expect([after.status, after.headers['ratelimit-policy']]).toEqual([429, '"metered";q=2;w=60']);
    },
  },
  {
    name: 'skipFailedRequests: a request that fails after its window has turned gives nothing to the new window',
    spec: (read) => ({
      global: {
        limit: 3,
        window: '1m',
        algorithm: 'fixed-window',
        name: 'uploads',
        skipFailedRequests: true,
        // A slow upload: its window turns, and the next window is spent, before it fails.
        requestWasSuccessful: async (request: never) => {
          if (read.header(request, 'x-upload') !== 'slow') return true;
          await whileUploading.run?.();
          return false;
        },
      },
    }),
    async run(app, { clock, idle }) {
      let failed: () => void = () => {};
      const uploadFailed = new Promise<void>((resolve) => (failed = resolve));
      whileUploading.run = async () => {
        clock.advance(60_000);
        whileUploading.statuses = await statuses(app, 3);
        failed();
      };
      expect((await app.send('GET', '/a', { 'x-upload': 'slow' })).status).toBe(200);
      await uploadFailed;
      await idle();
      expect(whileUploading.statuses).toEqual([200, 200, 200]);
      // Charged in the window before: its refund does not open a fourth place in this one.
      expect((await app.send('GET', '/a')).status).toBe(429);
    },
  },
  ...peerScenarios,
  ...delayScenarios,
];

/** What the slow upload of the late-refund scenario does while it runs, and what its requests got. */
const whileUploading: { run?: () => Promise<void>; statuses?: number[] } = {};

/** The policy of the overrides scenario, as its app and the other server both have it. */
const METERED = { limit: 2, window: '1m', algorithm: 'fixed-window', name: 'metered' } as const;
