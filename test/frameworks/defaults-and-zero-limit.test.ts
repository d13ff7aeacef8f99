/**
 * Through the real frameworks: a limiter created with no options at all (100 requests per minute per
 * client IP), and `limit: 0`, which refuses every request with a 429 and never asks the store.
 */
import { QUOTA_EXCEEDED_TYPE, type Store } from '@tollgate/core';
import { rateLimit as expressRateLimit } from '@tollgate/express';
import { tollgate } from '@tollgate/fastify';
import { rateLimit as koaRateLimit } from '@tollgate/koa';
import express5 from 'express';
import express4 from 'express4';
import fastify5 from 'fastify';
import fastify4 from 'fastify4';
import Koa3 from 'koa';
import Koa2 from 'koa2';
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TestApp, TestResponse } from './app-spec.js';
import { drivers } from './drivers.js';
import { draft10, jsonBody, retryAfterSeconds } from './parse-headers.js';

/** `GET /a` behind the framework's limiter, created as a user who read no docs would: with no options. */
const bareApps: readonly {
  readonly name: string;
  build(): Promise<(path: string) => Promise<TestResponse>>;
}[] = [
  ...[
    ['Express 5', express5],
    ['Express 4', express4],
  ].map(([name, express]) => ({
    name: name as string,
    async build() {
      const app = (express as typeof express5)();
      app.use(expressRateLimit());
      app.get('/a', (_req, res) => void res.send('ok'));
      return async (path: string) => fromSupertest(await request(app).get(path));
    },
  })),
  ...[
    ['Fastify 5', fastify5],
    ['Fastify 4', fastify4],
  ].map(([name, fastify]) => ({
    name: name as string,
    async build() {
      const app = (fastify as typeof fastify5)();
      await app.register(tollgate);
      app.get('/a', async () => 'ok');
      await app.ready();
      return async (path: string) => {
        const response = await app.inject({ method: 'GET', url: path });
        return {
          status: response.statusCode,
          headers: response.headers as Record<string, string>,
          body: response.body,
        };
      };
    },
  })),
  ...[
    ['Koa 3', Koa3],
    ['Koa 2', Koa2],
  ].map(([name, Koa]) => ({
    name: name as string,
    async build() {
      const app = new (Koa as typeof Koa3)();
      app.use(koaRateLimit());
      app.use((ctx) => {
        ctx.body = 'ok';
      });
      const server = app.callback();
      return async (path: string) => fromSupertest(await request(server).get(path));
    },
  })),
];

function fromSupertest(response: request.Response): TestResponse {
  return {
    status: response.status,
    headers: response.headers as Record<string, string>,
    body: response.text,
  };
}

describe.each(bareApps)('$name, no options at all', ({ build }) => {
  // The default store reads Date.now: standing time still makes "100 in a row" exact however slow the run.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'], now: 1_767_225_600_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('lets each client IP send 100 requests per minute, then answers 429', async () => {
    const get = await build();
    const first = await get('/a');
    expect(first.status).toBe(200);
    expect(draft10(first, 'ratelimit-policy')).toEqual({ '100-per-1m': { q: 100, w: 60 } });
    expect(draft10(first, 'ratelimit')).toEqual({ '100-per-1m': { r: 99, t: 1 } });
    for (let sent = 1; sent < 100; sent++) expect((await get('/a')).status).toBe(200);
    const limited = await get('/a');
    expect(limited.status).toBe(429);
    expect(retryAfterSeconds(limited)).toBe(1); // one token every 600 ms
    expect(jsonBody(limited)).toMatchObject({
      type: QUOTA_EXCEEDED_TYPE,
      'violated-policies': ['100-per-1m'],
    });
  });
});

/** A store that counts calls and answers none: `limit: 0` must never reach it. */
function untouchedStore(): Store & { readonly calls: () => number } {
  let calls = 0;
  const refuse = async (): Promise<never> => {
    calls++;
    throw new Error('limit 0 asked the store');
  };
  return { update: refuse, reset: refuse, calls: () => calls };
}

/** A 429 of `limit: 0`: the policy as it is (nothing left, nothing to wait for), and no Retry-After. */
function expectRefused(response: TestResponse, policy: string): void {
  expect(response.status).toBe(429);
  expect(retryAfterSeconds(response)).toBeUndefined();
  expect(draft10(response, 'ratelimit-policy')).toMatchObject({ [policy]: { q: 0 } });
  expect(draft10(response, 'ratelimit')).toMatchObject({ [policy]: { r: 0 } });
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(jsonBody(response)).toEqual({
    type: QUOTA_EXCEEDED_TYPE,
    title: 'Request cannot be satisfied as assigned quota has been exceeded',
    status: 429,
    detail: `Policy '${policy}' allows no requests.`,
    'violated-policies': [policy],
  });
}

describe.each(drivers)('$name, limit: 0', (driver) => {
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('refuses every request app-wide, the first one too, without asking the store', async () => {
    const store = untouchedStore();
    app = await driver.build({ global: { limit: 0, window: '1h', store } });
    for (const path of ['/a', '/b', '/a']) expectRefused(await app.send('GET', path), '0-per-1h');
    expect(store.calls()).toBe(0);
  });

  it('refuses every request on one route, while the others are limited as usual', async () => {
    const store = untouchedStore();
    app = await driver.build({
      global: { limit: 5, window: '1m', name: 'site' },
      routes: [{ method: 'POST', path: '/closed', limit: { limit: 0, store } }],
    });
    expect((await app.send('GET', '/a')).status).toBe(200);
    expectRefused(await app.send('POST', '/closed'), '0-per-1m');
    expectRefused(await app.send('POST', '/closed'), '0-per-1m');
    expect((await app.send('GET', '/b')).status).toBe(200);
    expect(store.calls()).toBe(0);
  });

  it('takes the default window for a route that gives only a limit', async () => {
    app = await driver.build({
      global: {},
      routes: [{ method: 'POST', path: '/login', limit: { limit: 2 } }],
    });
    const login = await app.send('POST', '/login');
    expect(draft10(login, 'ratelimit-policy')).toMatchObject({ '2-per-1m': { q: 2, w: 60 } });
  });
});
