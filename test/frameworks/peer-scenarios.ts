/**
 * Scenarios of what users of express-rate-limit, @fastify/rate-limit and koa-ratelimit reach for:
 * counting only some responses, the request's rate-limit info, resetting a key, the allow-list, the
 * callbacks, the status and header switches, and the setup warnings. Part of the one scenario table.
 */
import { byIp, byUser, firstOf, QUOTA_EXCEEDED_TYPE } from '@tollgate/core';
import { expect } from 'vitest';
import type { TestApp, TestResponse } from './app-spec.js';
import { draft10, jsonBody } from './parse-headers.js';
import type { AdapterScenario } from './scenarios.js';

const login = (app: TestApp, status: number, headers: Record<string, string> = {}) =>
  app.send('POST', '/login', { 'x-status': String(status), ...headers });

/** `r` of the one policy in a draft-11 `RateLimit` field. */
const remainingOf = (response: TestResponse) => Object.values(draft10(response, 'ratelimit'))[0]?.r;

const codesLogged = (logged: string[], code: string) => logged.filter((line) => line.startsWith(`[${code}]`));

/** What the callbacks of the callback scenario were told, for the app it built last. */
let told: string[] = [];

export const peerScenarios: AdapterScenario[] = [
  {
    name: 'skipSuccessfulRequests: only failed logins count; successes never use the limit up',
    spec: () => ({
      routes: [
        { method: 'POST', path: '/login', limit: { limit: 3, window: '15m', skipSuccessfulRequests: true } },
      ],
    }),
    async run(app, { idle }) {
      for (let i = 0; i < 5; i++) {
        const ok = await login(app, 200);
        expect([ok.status, remainingOf(ok)]).toEqual([200, 2]); // charged on arrival, given back after
        await idle();
      }
      const failed: unknown[][] = [];
      for (let i = 0; i < 3; i++) {
        const response = await login(app, 401);
        failed.push([response.status, remainingOf(response)]);
      }
      expect(failed).toEqual([
        [401, 2],
        [401, 1],
        [401, 0],
      ]);
      await idle();
      expect((await login(app, 200)).status).toBe(429); // the limit of failures is reached, for everyone
    },
  },
  {
    name: 'skipFailedRequests: a failed response, or an error the handler threw, gets its tokens back',
    spec: () => ({
      routes: [
        { method: 'GET', path: '/fetch', limit: { limit: 2, window: '1h', skipFailedRequests: true } },
      ],
    }),
    async run(app, { idle }) {
      for (const status of [404, 503]) {
        const response = await app.send('GET', '/fetch', { 'x-status': String(status) });
        expect([response.status, remainingOf(response)]).toEqual([status, 1]);
        await idle();
      }
      // The framework answers 500 (Koa's default error handling drops the headers of an error's answer).
      expect((await app.send('GET', '/fetch', { 'x-throw': 'yes' })).status).toBe(500);
      await idle();
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await app.send('GET', '/fetch')).status);
      expect(statuses).toEqual([200, 200, 429]);
    },
  },
  {
    name: 'requestWasSuccessful decides what a success is',
    spec: (read) => ({
      routes: [
        {
          method: 'POST',
          path: '/login',
          limit: {
            limit: 1,
            window: '15m',
            skipSuccessfulRequests: true,
            requestWasSuccessful: (req) => read.header(req, 'x-outcome') === 'signed-in',
          },
        },
      ],
    }),
    async run(app, { idle }) {
      expect((await login(app, 500, { 'x-outcome': 'signed-in' })).status).toBe(500);
      await idle();
      expect((await login(app, 200, { 'x-outcome': 'wrong-password' })).status).toBe(200); // counted
      await idle();
      expect((await login(app, 200)).status).toBe(429);
    },
  },
  {
    name: "the request's rate limit is there for later code: the last limiter's when they are stacked",
    spec: () => ({
      global: { limit: 10, window: '1m', name: 'site' },
      routes: [{ method: 'GET', path: '/me', limit: { limit: 2, window: '1m', name: 'me' } }],
    }),
    async run(app, { clock }) {
      const me = jsonBody(await app.send('GET', '/me', { 'x-echo': 'rateLimit' }));
      // Express and Koa ran the app-wide limiter first, Fastify the route's alone: the route's stays.
      expect(me).toEqual({
        limiter: 'me',
        key: 'ip:127.0.0.1',
        limit: 2,
        remaining: 1,
        used: 1,
        resetMs: 30_000,
        resetTime: new Date(clock.now() + 30_000).toISOString(),
      });
      expect(jsonBody(await app.send('GET', '/a', { 'x-echo': 'rateLimit' }))).toMatchObject({
        limiter: 'site',
        limit: 10,
      });
    },
  },
  {
    name: 'requestPropertyName puts it under another name, or nowhere with false',
    spec: () => ({
      routes: [
        {
          method: 'GET',
          path: '/named',
          limit: { limit: 5, window: '1m', requestPropertyName: 'searchLimit' },
        },
        { method: 'GET', path: '/none', limit: { limit: 5, window: '1m', requestPropertyName: false } },
      ],
    }),
    async run(app) {
      const named = async (property: string) =>
        jsonBody(await app.send('GET', '/named', { 'x-echo': property }));
      expect(await named('searchLimit')).toMatchObject({ limit: 5, remaining: 4 });
      expect(await named('rateLimit')).toBeNull();
      expect(jsonBody(await app.send('GET', '/none', { 'x-echo': 'rateLimit' }))).toBeNull();
    },
  },
  {
    name: "a handler can reset the request's key: a successful password reset unblocks the client",
    spec: () => ({ routes: [{ method: 'POST', path: '/login', limit: { limit: 2, window: '15m' } }] }),
    async run(app) {
      expect((await login(app, 401)).status).toBe(401);
      expect((await login(app, 200, { 'x-reset': 'yes' })).status).toBe(200);
      const after = [];
      for (let i = 0; i < 3; i++) after.push((await login(app, 401)).status);
      expect(after).toEqual([401, 401, 429]);
    },
  },
  {
    name: 'allowList: listed client IPs are never charged and get no headers; a header cannot list itself',
    spec: () => ({
      trustProxy: true,
      global: { limit: 1, window: '1h', allowList: ['198.51.100.7', '2001:db8::1'] },
    }),
    async run(app) {
      for (const ip of ['198.51.100.7', '::ffff:198.51.100.7', '2001:db8::1', '198.51.100.7']) {
        const response = await app.send('GET', '/a', { 'x-forwarded-for': ip });
        expect([response.status, response.headers.ratelimit]).toEqual([200, undefined]);
      }
      const other = (await app.send('GET', '/a', { 'x-forwarded-for': '198.51.100.8' })).status;
      // The framework trusts every proxy here, so the leftmost entry is the client: only the real one counts.
      const spoofed = (await app.send('GET', '/a', { 'x-forwarded-for': '198.51.100.8, 198.51.100.7' }))
        .status;
      expect([other, spoofed]).toEqual([200, 429]);
    },
  },
  {
    name: 'allowList: listed identities, as the key function returns them',
    spec: (read) => ({
      global: {
        limit: 1,
        window: '1h',
        key: firstOf(
          byUser((req) => read.userId(req)),
          byIp(),
        ),
        allowList: ['user:ops'],
      },
    }),
    async run(app) {
      const statuses = async (user: string) => [
        (await app.send('GET', '/a', { 'x-user': user })).status,
        (await app.send('GET', '/a', { 'x-user': user })).status,
      ];
      expect(await statuses('ops')).toEqual([200, 200]);
      expect(await statuses('ada')).toEqual([200, 429]);
    },
  },
  {
    name: 'onExceeding and onExceeded are told of each request; a callback that throws breaks nothing',
    spec: (read) => {
      told = [];
      return {
        global: {
          limit: 1,
          window: '1h',
          onExceeding: (req, info) =>
            void told.push(`${read.header(req, 'x-n')}: let through, r=${info.remaining}`),
          onExceeded: (req, info) => {
            told.push(`${read.header(req, 'x-n')}: refused, ${info.decision.reason}`);
            throw new Error('the metrics client is down');
          },
        },
      };
    },
    async run(app, { logged }) {
      const statuses = [];
      for (const n of ['1', '2', '3']) statuses.push((await app.send('GET', '/a', { 'x-n': n })).status);
      expect(statuses).toEqual([200, 429, 429]);
      expect(told).toEqual(['1: let through, r=0', '2: refused, limited', '3: refused, limited']);
      expect(codesLogged(logged, 'TOLLGATE_CALLBACK_FAILED')).toEqual([
        '[TOLLGATE_CALLBACK_FAILED] onExceeded failed; the request went on: the metrics client is down',
      ]);
    },
  },
  {
    name: 'statusCode answers limited requests with another status; Retry-After can be switched off',
    spec: () => ({
      global: { limit: 1, window: '1h', statusCode: 503, addHeaders: { 'retry-after': false } },
    }),
    async run(app) {
      await app.send('GET', '/a');
      const limited = await app.send('GET', '/a');
      expect(limited.status).toBe(503);
      expect(limited.headers['retry-after']).toBeUndefined();
      expect(draft10(limited, 'ratelimit')).toEqual({ '1-per-1h': { r: 0, t: 3600 } });
      expect(jsonBody(limited)).toMatchObject({ type: QUOTA_EXCEEDED_TYPE, status: 503 });
    },
  },
  {
    name: 'addHeadersOnExceeding switches headers of allowed answers off, and not of limited ones',
    spec: () => ({
      global: {
        limit: 1,
        window: '1h',
        legacyHeaders: true,
        addHeadersOnExceeding: { 'ratelimit-policy': false, 'x-ratelimit-reset': false },
      },
    }),
    async run(app) {
      const allowed = await app.send('GET', '/a');
      const limited = await app.send('GET', '/a');
      const names = (response: TestResponse) =>
        Object.keys(response.headers)
          .filter((name) => /ratelimit|retry-after/.test(name))
          .sort();
      expect(names(allowed)).toEqual(['ratelimit', 'x-ratelimit-limit', 'x-ratelimit-remaining']);
      expect(names(limited)).toEqual([
        'ratelimit',
        'ratelimit-policy',
        'retry-after',
        'x-ratelimit-limit',
        'x-ratelimit-remaining',
        'x-ratelimit-reset',
      ]);
    },
  },
  {
    name: 'a key function that returns a whole IPv6 address is warned about, once',
    spec: (read) => ({ global: { limit: 5, window: '1h', key: (req) => read.header(req, 'x-client') } }),
    async run(app, { logged }) {
      for (const client of ['2001:db8::1', '2001:db8::2', '2001:db8::3']) {
        await app.send('GET', '/a', { 'x-client': client });
      }
      expect(codesLogged(logged, 'TOLLGATE_UNGROUPED_IPV6_KEY')).toHaveLength(1);
    },
  },
];
