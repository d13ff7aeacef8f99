/**
 * A check whose key Redis reads but refuses to write (out of memory, `noeviction`): every script a check
 * alone in its call can run (one policy of each algorithm, with a ban, reading overrides, two policies)
 * answers Redis's refusal as the check's error, and the key stays as it was.
 */
import { createLimiter, type LimiterOptions, RedisStore } from '@tollgate/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, uniquePrefix } from '../harness/clients.js';
import { type RedisProcess, startRedisServer } from '../harness/redis-server.js';

const CASES: { name: string; options: Omit<LimiterOptions, 'store'> }[] = [];
for (const algorithm of ['token-bucket', 'fixed-window', 'sliding-window'] as const) {
  const policies = { limit: 5, window: '1h', algorithm };
  CASES.push(
    { name: `${algorithm}`, options: { policies } },
    { name: `${algorithm} with a ban`, options: { policies, ban: { after: 2, duration: '1m' } } },
    { name: `${algorithm} reading overrides`, options: { policies, overrides: true } },
  );
}
CASES.push({
  name: 'a token bucket and a fixed window',
  options: {
    policies: [
      { limit: 5, window: '1h', name: 'bucket' },
      { limit: 9, window: '1h', algorithm: 'fixed-window', name: 'hourly' },
    ],
  },
});

let server: RedisProcess;
beforeAll(async () => {
  server = await startRedisServer(['--maxmemory-policy', 'noeviction']);
});
afterAll(async () => {
  await server.stop();
});

describe.each(CASES)('a check whose key Redis reads but will not write: $name', ({ options }) => {
  it("fails with Redis's refusal, and the key stays as it was", async () => {
    const client = await connectRedis(server.url);
    try {
      const prefix = uniquePrefix('refused-write');
      const limiter = createLimiter({
        ...options,
        store: new RedisStore({ client, prefix, logger: { warn: () => {}, error: () => {} } }),
        onStoreError: 'throw',
      });
      expect((await limiter.consume('k')).allowed).toBe(true);
      const keys = (await client.keys(`${prefix}*`)).filter((key) => !key.endsWith(':o'));
      expect(keys).toHaveLength(1);
      const [key] = keys as [string];
      const before = await client.get(key);

      await client.config('SET', 'maxmemory', '1'); // every write is now refused; reads still work
      const refused = await limiter.consume('k').then(
        () => undefined,
        (error: { code?: string; message: string }) => error,
      );
      await client.config('SET', 'maxmemory', '0');
      expect(refused?.code).toBe('TOLLGATE_STORE_REFUSED');
      expect(refused?.message).toMatch(/^OOM/);
      expect(await client.get(key)).toBe(before);
      expect((await limiter.consume('k')).allowed).toBe(true); // written again once Redis lets it
      expect(await client.get(key)).not.toBe(before);
    } finally {
      await client.config('SET', 'maxmemory', '0').catch(() => {});
      client.disconnect();
    }
  });
});
