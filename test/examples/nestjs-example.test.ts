/**
 * The NestJS example: the app answers as its printed curl lines promise, and `pnpm start` runs it, in
 * memory by default and on Redis when REDIS_URL is set.
 */
import { once } from 'node:events';
import type { INestApplication } from '@nestjs/common';
import { MemoryStore } from '@tollgate/core';
import { createApp } from '@tollgate/example-nestjs/app';
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { startExample } from '../harness/example-process.js';
import { freePort } from '../harness/redis-server.js';

describe('examples/nestjs', () => {
  let app: INestApplication;
  beforeEach(async () => {
    app = await createApp(new MemoryStore());
    await app.init();
  });
  afterEach(() => app.close());

  it('limits logins, keys the API by API key, and leaves /health alone', async () => {
    const server = app.getHttpServer();
    const logins = [];
    for (let i = 0; i < 4; i++) logins.push((await request(server).post('/login')).status);
    expect(logins).toEqual([200, 200, 200, 429]);
    expect((await request(server).get('/health')).headers.ratelimit).toBeUndefined();
    const api = await request(server).get('/api/widgets').set('x-api-key', 'demo-key-1');
    expect(api.status).toBe(200);
    expect(api.headers.ratelimit).toContain('"5-per-1m";r=4');
    const home = await request(server).get('/');
    expect(home.headers.ratelimit).toContain('"20-per-1m";r=19');
  });

  it('refuses with problem details and Retry-After', async () => {
    const server = app.getHttpServer();
    for (let i = 0; i < 3; i++) await request(server).post('/login');
    const refused = await request(server).post('/login');
    expect(refused.headers['content-type']).toBe('application/problem+json');
    expect(refused.headers['retry-after']).toBe('20');
    expect(refused.body).toMatchObject({ status: 429, 'violated-policies': ['3-per-1m'] });
  });
});

describe.each([
  ['in memory', () => ({}), /store: memory/],
  ['on Redis', () => ({ REDIS_URL: inject('redisUrl') }), /store: Redis at 127\.0\.0\.1:\d+/],
])('examples/nestjs start, %s', (_name, env, storeLine) => {
  it('serves the app until SIGTERM, then closes the server and the store', async () => {
    const port = await freePort();
    const { child, banner } = await startExample('nestjs', 'curl -i http', { ...env(), PORT: String(port) });
    try {
      expect(banner).toMatch(storeLine);
      const home = await fetch(`http://127.0.0.1:${port}/`);
      expect(home.status).toBe(200);
      expect(home.headers.get('ratelimit')).toMatch(/^"20-per-1m";r=\d+;t=\d+$/);
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);
});
