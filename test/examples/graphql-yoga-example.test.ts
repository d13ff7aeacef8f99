/** examples/graphql-yoga answers as its printed curl lines promise, in memory and on the harness's Redis, on a real socket. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MemoryStore, RedisStore, type Store } from '@tollgate/core';
import { createApp } from '@tollgate/example-graphql-yoga/app';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { post } from '../graphql/graphql-servers.js';
import { connectRedis, uniquePrefix } from '../harness/clients.js';

const redis: Redis = await connectRedis();
afterAll(() => redis.disconnect());

const stores: { name: string; create(): Store }[] = [
  { name: 'MemoryStore', create: () => new MemoryStore() },
  {
    name: 'RedisStore',
    create: () => new RedisStore({ client: redis, prefix: uniquePrefix('example-graphql-yoga') }),
  },
];

describe.each(stores)('examples/graphql-yoga on $name', ({ create }) => {
  it('charges a query its actual cost, refuses the fan-out with 403, and spends the budget into a 429', async () => {
    const server = createServer(createApp(create()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
    try {
      const small = await post(url, 'unused', '{ products(first: 5) { name reviews(first: 5) { stars } } }');
      expect(small.status).toBe(200);
      expect(small.body.extensions?.cost).toMatchObject({ requested: 31, actual: 16 });
      expect(small.headers.get('ratelimit')).toBe('"300-per-1m";r=269;t=1');

      const fanOut = await post(
        url,
        'unused',
        '{ products(first: 100) { name reviews(first: 100) { stars } } }',
      );
      expect(fanOut.status).toBe(403);
      expect(fanOut.body.errors?.[0]?.extensions?.code).toBe('TOLLGATE_COST_EXCEEDS_CAPACITY');

      // 1 + 12 × (1 + 3 × 5) = 193 estimated, 1 + 12 × (1 + 2 × 5) = 133 charged: 151 left of 284, too few for 193.
      const query = '{ products(first: 12) { recommendations { name } } }';
      const first = await post(url, 'unused', query);
      expect([first.status, first.body.extensions?.cost?.actual]).toEqual([200, 133]);
      const second = await post(url, 'unused', query);
      expect(second.status).toBe(429);
      expect(second.headers.get('retry-after')).toMatch(/^[89]$/); // 42 points at 5 a second, less what refilled
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
