/**
 * The examples run: the three apps answer as their printed curl lines promise, and the distributed demo
 * shows 3× the limit in memory and exactly the limit on Redis.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { MemoryStore } from '@tollgate/core';
import { createApp as createExpressApp } from '@tollgate/example-express/app';
import { createApp as createFastifyApp } from '@tollgate/example-fastify/app';
import { createApp as createKoaApp } from '@tollgate/example-koa/app';
import { countDecisions, statsRequested } from '@tollgate/example-support/stats';
import request from 'supertest';
import { describe, expect, inject, it } from 'vitest';

const run = promisify(execFile);

type Send = (
  method: 'get' | 'post',
  path: string,
  headers?: Record<string, string>,
) => Promise<request.Response>;

const apps: { name: string; open(): Promise<{ send: Send; close(): Promise<void> }> }[] = [
  {
    name: 'express',
    async open() {
      const app = createExpressApp(new MemoryStore());
      return {
        send: (method, path, headers = {}) => request(app)[method](path).set(headers),
        close: async () => {},
      };
    },
  },
  {
    name: 'fastify',
    async open() {
      const app = await createFastifyApp(new MemoryStore());
      await app.ready();
      return {
        send: (method, path, headers = {}) => request(app.server)[method](path).set(headers),
        close: () => app.close(),
      };
    },
  },
  {
    name: 'koa',
    async open() {
      const app = createKoaApp(new MemoryStore()).callback();
      return {
        send: (method, path, headers = {}) => request(app)[method](path).set(headers),
        close: async () => {},
      };
    },
  },
];

describe.each(apps)('examples/$name', ({ open }) => {
  it('limits logins, keys the API by API key, and leaves /health alone', async () => {
    const { send, close } = await open();
    try {
      const logins = [];
      for (let i = 0; i < 4; i++) logins.push((await send('post', '/login')).status);
      expect(logins).toEqual([200, 200, 200, 429]);
      expect((await send('get', '/health')).headers.ratelimit).toBeUndefined();
      const api = await send('get', '/api/widgets', { 'x-api-key': 'demo-key-1' });
      expect(api.status).toBe(200);
      expect(api.headers.ratelimit).toContain('"5-per-1m";r=4');
    } finally {
      await close();
    }
  });
});

describe('examples/express --stats', () => {
  it('sums up a burst in one line from the tollgate:decision channel', async () => {
    const counter = countDecisions();
    try {
      const app = createExpressApp(new MemoryStore());
      expect(counter.takeLine()).toBeUndefined(); // a quiet second prints nothing
      await Promise.all(Array.from({ length: 5 }, () => request(app).post('/login')));
      const line = counter.takeLine(new Date(2026, 0, 1, 12, 0, 1));
      expect(line).toBe('12:00:01  allowed 8  limited 2  degraded 0  (limited by login 2)');
      expect(counter.takeLine()).toBeUndefined(); // each line counts its own second
    } finally {
      counter.stop();
    }
  });

  it('is asked for with --stats (pnpm demo -- --stats) or TOLLGATE_STATS=1', () => {
    expect(statsRequested(['node', 'index.ts', '--', '--stats'], {})).toBe(true);
    expect(statsRequested(['node', 'index.ts'], { TOLLGATE_STATS: '1' })).toBe(true);
    expect(statsRequested(['node', 'index.ts'], {})).toBe(false);
  });
});

describe('examples/distributed', () => {
  it('lets through 3× the limit with a memory store per process, and exactly the limit on Redis', async () => {
    const cwd = fileURLToPath(new URL('../../examples/distributed/', import.meta.url));
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'index.ts'], {
      cwd,
      env: { ...process.env, REDIS_URL: inject('redisUrl') },
      timeout: 60_000,
    });
    expect(stdout).toMatch(/MemoryStore, one per process\s+30\s+30\s+30\s+0/);
    expect(stdout).toMatch(/RedisStore, shared\s+10\s+10\s+50\s+0/);
  }, 90_000);
});
