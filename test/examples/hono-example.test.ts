/** examples/hono answers as its printed curl lines promise, in memory and on the harness's Redis, on a real socket. */
import { MemoryStore, RedisStore, type Store } from '@tollgate/core';
import { createApp } from '@tollgate/example-hono/app';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { listen } from '../frameworks/web-drivers.js';
import { connectRedis, uniquePrefix } from '../harness/clients.js';

const redis: Redis = await connectRedis();
afterAll(() => redis.disconnect());

const stores: { name: string; create(): Store }[] = [
  { name: 'MemoryStore', create: () => new MemoryStore() },
  {
    name: 'RedisStore',
    create: () => new RedisStore({ client: redis, prefix: uniquePrefix('example-hono') }),
  },
];

describe.each(stores)('examples/hono on $name', ({ create }) => {
  it('limits logins, keys the API by API key, and leaves /health alone', async () => {
    const app = createApp(create());
    // As `pnpm start` serves it: on @hono/node-server, whose getConnInfo gives the client IP.
    const server = await listen(app.fetch);
    try {
      const logins = [];
      for (let i = 0; i < 4; i++)
        logins.push((await fetch(`${server.url}/login`, { method: 'POST' })).status);
      expect(logins).toEqual([200, 200, 200, 429]);
      const health = await fetch(`${server.url}/health`);
      expect([health.status, health.headers.get('ratelimit')]).toEqual([200, null]);
      const api = await fetch(`${server.url}/api/widgets`, { headers: { 'x-api-key': 'demo-key-1' } });
      expect(api.status).toBe(200);
      expect(api.headers.get('ratelimit')).toContain('"5-per-1m";r=4');
      expect(await api.json()).toEqual({ widgets: ['sprocket', 'flange'] });
    } finally {
      await server.close();
    }
  });
});
