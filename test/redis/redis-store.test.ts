/** RedisStore behaviour beyond the conformance table: script cache loss, errors, the server clock, keys. */
import { createLimiter, hashIdentity, MemoryStore, RedisStore } from '@tollgate/core';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { clusterSlot } from '../../packages/core/src/stores/redis/cluster-slot.js';
import { connectCluster, connectRedis, uniquePrefix } from '../harness/clients.js';
import { startRedisServer } from '../harness/redis-server.js';

const redis: Redis = await connectRedis();
afterAll(() => redis.disconnect());

/** Counts the calls made through a real client, passing each one on unchanged. */
function countingClient(client: Redis) {
  const calls = { evalsha: 0, eval: 0 };
  return {
    calls,
    client: {
      evalsha(...args: Parameters<Redis['evalsha']>) {
        calls.evalsha++;
        return client.evalsha(...args);
      },
      eval(...args: Parameters<Redis['eval']>) {
        calls.eval++;
        return client.eval(...args);
      },
      del: (...keys: string[]) => client.del(...keys),
    },
  };
}

/**
 * Runs `steps` on `onRedis` all in one tick (one script call) and one after another on `inMemory`, in
 * each of `rounds` rounds (`nextRound` moves the clock first), and expects the same results; resolves to
 * the reasons the decisions gave.
 */
async function batchedAsOneByOne<Limiters>(
  steps: readonly ((limiters: Limiters) => Promise<unknown>)[],
  onRedis: Limiters,
  inMemory: Limiters,
  rounds: number,
  nextRound: (round: number) => void,
): Promise<Set<unknown>> {
  const reasons = new Set<unknown>();
  for (let round = 0; round < rounds; round++) {
    nextRound(round);
    const batched = await Promise.all(steps.map((step) => step(onRedis)));
    const oneByOne: unknown[] = [];
    for (const step of steps) oneByOne.push(await step(inMemory));
    expect(batched, `round ${round}`).toEqual(oneByOne);
    for (const result of oneByOne) reasons.add((result as { reason?: string } | undefined)?.reason);
  }
  return reasons;
}

describe('RedisStore', () => {
  it('keeps working after SCRIPT FLUSH, falling back to EVAL once', async () => {
    const { client, calls } = countingClient(redis);
    const limiter = createLimiter({
      store: new RedisStore({ client, prefix: uniquePrefix('noscript') }),
      policies: { limit: 3, window: '1h' },
    });
    expect((await limiter.consume('k')).allowed).toBe(true);
    await redis.script('FLUSH');
    expect((await limiter.consume('k')).decidedBy.remaining).toBe(1);
    expect((await limiter.consume('k')).decidedBy.remaining).toBe(0);
    expect(calls).toEqual({ evalsha: 3, eval: calls.eval });
    expect(calls.eval).toBeGreaterThanOrEqual(1);
    expect(calls.eval).toBeLessThanOrEqual(2); // at most the first call (cold cache) and the one after FLUSH
  });

  it('does not retry errors other than NOSCRIPT', async () => {
    const prefix = uniquePrefix('wrongtype');
    const { client, calls } = countingClient(redis);
    const limiter = createLimiter({
      store: new RedisStore({ client, prefix }),
      policies: { limit: 2, window: '1h' },
      onStoreError: 'throw',
    });
    await limiter.consume('k'); // warms the script cache, so the next EVALSHA cannot be NOSCRIPT
    const [key] = await redis.keys(`${prefix}*`);
    await redis.del(key as string);
    await redis.hset(key as string, 'not', 'a bucket');
    const before = { ...calls };
    await expect(limiter.consume('k')).rejects.toThrow(/WRONGTYPE/);
    expect(calls).toEqual({ evalsha: before.evalsha + 1, eval: before.eval });
  });

  it("reads the Redis server's clock when none is injected", async () => {
    const limiter = createLimiter({
      store: new RedisStore({ client: redis, prefix: uniquePrefix('server-clock') }),
      policies: { limit: 1, window: '1h' },
    });
    expect((await limiter.consume('k')).allowed).toBe(true);
    const denied = await limiter.consume('k');
    expect(denied.allowed).toBe(false);
    expect(denied.retryAfterMs).toBeGreaterThan(3_590_000);
    expect(denied.retryAfterMs).toBeLessThanOrEqual(3_600_000);
  });

  it('stores hashed identities and hash-tagged keys, never the secret', async () => {
    const prefix = uniquePrefix('secret');
    const limiter = createLimiter({
      store: new RedisStore({ client: redis, prefix }),
      policies: [
        { limit: 5, window: '1s', name: 'burst' },
        { limit: 100, window: '1h', name: 'hourly' },
      ],
      namespace: 'api',
    });
    const apiKey = 'sk_live_0123456789abcdef';
    await limiter.consume(hashIdentity(apiKey));
    const keys = await redis.keys(`${prefix}*`);
    // One key holds every policy's bucket; the hash tag is namespace/identity.
    expect(keys).toEqual([expect.stringMatching(/:\w+$/)]);
    expect(keys[0]?.startsWith(`${prefix}{api/${hashIdentity(apiKey)}}:`)).toBe(true);
    expect(keys.join()).not.toContain(apiKey);
  });

  it.each([
    [{}, 'enableOfflineQueue is on and maxRetriesPerRequest is 20, not 0'],
    [{ enableOfflineQueue: false }, 'maxRetriesPerRequest is 20, not 0'],
    [{ enableOfflineQueue: false, maxRetriesPerRequest: 0 }, undefined],
  ])('warns about an ioredis client that would queue checks: %j', (options, why) => {
    const lines: string[] = [];
    const logger = { warn: (line: string) => lines.push(line), error: (line: string) => lines.push(line) };
    const client = new Redis(inject('redisUrl'), { ...options, lazyConnect: true });
    new RedisStore({ client, logger });
    expect(lines).toEqual(
      why === undefined
        ? []
        : [
            `[TOLLGATE_REDIS_CLIENT_QUEUES] the Redis client would hold commands back and send them later (${why}). ` +
              'Tollgate sends no check while the client is not connected, but a check caught by a dropped connection ' +
              'may still reach Redis after it reconnects. Create the client with { enableOfflineQueue: false, maxRetriesPerRequest: 0 }.',
          ],
    );
  });

  it("keeps every identity's keys in the slot of its whole owner, braces and all, on the Cluster", async () => {
    const cluster = await connectCluster();
    try {
      const prefix = uniquePrefix('slots');
      const limiter = createLimiter({
        store: new RedisStore({ client: cluster, prefix }),
        policies: [
          { limit: 1, window: '1s', name: 'second' },
          { limit: 5, window: '1h', name: 'hour' },
        ],
      });
      for (const identity of ['}', '}x', '{', 'a}b', '{victim}']) {
        expect((await limiter.consume(identity)).allowed, identity).toBe(true); // no CROSSSLOT
        expect((await limiter.consume(identity)).allowed, identity).toBe(false);
      }
      const keys = (await Promise.all(cluster.nodes('master').map((node) => node.keys(`${prefix}*`)))).flat();
      expect(keys).toHaveLength(5);
      for (const key of keys) {
        // One pair of braces, around the whole owner: the identity cannot pick a tag of its own.
        const tag = /^[^{}]*\{([^{}]+)\}[^{}]*$/.exec(key)?.[1];
        expect(tag, key).toMatch(/^\//);
        const [keySlot, tagSlot] = await Promise.all([
          cluster.call('CLUSTER', 'KEYSLOT', key),
          cluster.call('CLUSTER', 'KEYSLOT', tag as string),
        ]);
        expect(keySlot).toBe(tagSlot);
      }
    } finally {
      cluster.disconnect();
    }
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY])(
    'refuses a clock that returns %s, in both stores',
    async (bad) => {
      const policies = { limit: 1, window: '1s' } as const;
      for (const store of [
        new MemoryStore({ clock: () => bad }),
        new RedisStore({ client: redis, prefix: uniquePrefix('bad-clock'), clock: () => bad }),
      ]) {
        // A programming error, not a store failure: no insurance decision hides it.
        await expect(createLimiter({ store, policies }).consume('k')).rejects.toThrow(/clock must return ms/);
      }
    },
  );

  it('decides concurrent checks in one script call, and one refused key fails only its own check', async () => {
    const prefix = uniquePrefix('batch');
    const store = new RedisStore({ client: redis, prefix });
    const limiter = createLimiter({ store, policies: { limit: 2, window: '1h' }, onStoreError: 'throw' });
    await limiter.consume('bad');
    const [badKey] = await redis.keys(`${prefix}*`);
    await redis.del(badKey as string);
    await redis.hset(badKey as string, 'not', 'a bucket');
    const outcomes = await Promise.allSettled(['a', 'bad', 'b', 'a', 'a'].map((key) => limiter.consume(key)));
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value.allowed : 'error'))).toEqual([
      true,
      'error',
      true,
      true,
      false,
    ]);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toMatch(/WRONGTYPE/);
  });

  it("decides a key's checks within one script call one after another, as a MemoryStore does", async () => {
    // The script reads each key once per batch and writes it once: every check must still see the ones
    // before it, whatever their mode, algorithm or ban.
    let nowMs = 1_700_000_000_000;
    const clock = () => nowMs;
    const options = {
      policies: [
        { limit: 5, window: '1m' },
        { limit: 7, window: '1m', algorithm: 'fixed-window' },
        { limit: 6, window: '1m', algorithm: 'sliding-window' },
      ],
      ban: { after: 3, duration: '1m' },
      denyCache: false,
      onStoreError: 'throw',
    } as const;
    const onRedis = createLimiter({
      ...options,
      store: new RedisStore({ client: redis, prefix: uniquePrefix('held'), clock }),
    });
    const inMemory = createLimiter({ ...options, store: new MemoryStore({ clock }) });
    type Step = (limiter: typeof onRedis) => Promise<unknown>;
    const steps: Step[] = [];
    for (let i = 0; i < 12; i++) {
      steps.push((l) => l.consume('hot', { cost: 1 + (i % 2) }));
      if (i % 4 === 1) steps.push((l) => l.refund('hot', 1));
      if (i % 5 === 2) steps.push((l) => l.peek('hot'));
      if (i % 6 === 3) steps.push((l) => l.consume('other'));
    }
    const reasons = await batchedAsOneByOne(steps, onRedis, inMemory, 3, (round) => {
      nowMs += round * 7_000;
    });
    expect([...reasons].sort()).toEqual(['allowed', 'banned', 'limited', undefined]);
  });

  it('decides the checks of several limiters on one store in one script call, as a MemoryStore does', async () => {
    // One call carries each limiter's policy set once, of its own length, ban or none: every check must
    // be decided with its own limiter's.
    let nowMs = 1_700_000_000_000;
    const clock = () => nowMs;
    const optionsA = {
      policies: [
        { limit: 4, window: '1m' },
        { limit: 9, window: '1h', burst: 6 },
      ],
      denyCache: false,
      onStoreError: 'throw',
    } as const;
    const optionsB = {
      policies: [
        { limit: 3, window: '1m', algorithm: 'sliding-window' },
        { limit: 5, window: '1m', algorithm: 'fixed-window' },
      ],
      ban: { after: 2, duration: '1m' },
      denyCache: false,
      onStoreError: 'throw',
    } as const;
    const store = new RedisStore({ client: redis, prefix: uniquePrefix('sets'), clock });
    const memory = new MemoryStore({ clock });
    const onRedis = { a: createLimiter({ ...optionsA, store }), b: createLimiter({ ...optionsB, store }) };
    const inMemory = {
      a: createLimiter({ ...optionsA, store: memory }),
      b: createLimiter({ ...optionsB, store: memory }),
    };
    type Step = (limiters: typeof onRedis) => Promise<unknown>;
    const steps: Step[] = [];
    for (let i = 0; i < 10; i++) {
      steps.push(({ a }) => a.consume('hot'));
      steps.push(({ b }) => b.consume(i % 3 === 0 ? 'other' : 'hot'));
      if (i % 4 === 2) steps.push(({ a }) => a.refund('hot', 1));
    }
    const reasons = await batchedAsOneByOne(steps, onRedis, inMemory, 2, (round) => {
      nowMs += round * 20_000;
    });
    expect([...reasons].sort()).toEqual(['allowed', 'banned', 'limited', undefined]);
  });

  it('decides a batch of one-policy checks of every algorithm, keys alone and repeated, as a MemoryStore does', async () => {
    // A set of one policy has its own paths (a key alone in the call, a key held for its checks), whose
    // answers take as many numbers as the algorithm's state: each check must be read at its own place.
    let nowMs = 1_700_000_000_000;
    const clock = () => nowMs;
    const algorithms = ['token-bucket', 'fixed-window', 'sliding-window'] as const;
    const limitersOn = (store: RedisStore | MemoryStore) =>
      algorithms.map((algorithm) =>
        createLimiter({
          store,
          policies: { limit: 3, window: '1m', algorithm },
          denyCache: false,
          onStoreError: 'throw',
        }),
      );
    const onRedis = limitersOn(new RedisStore({ client: redis, prefix: uniquePrefix('alone'), clock }));
    const inMemory = limitersOn(new MemoryStore({ clock }));
    type Step = (limiters: typeof onRedis) => Promise<unknown>;
    const steps: Step[] = [];
    for (let i = 0; i < 12; i++) {
      const limiter = i % 3;
      steps.push((l) => (l[limiter] as (typeof onRedis)[number]).consume(`alone-${i}`));
      steps.push((l) => (l[limiter] as (typeof onRedis)[number]).consume('repeated'));
    }
    const reasons = await batchedAsOneByOne(steps, onRedis, inMemory, 3, (round) => {
      nowMs += round * 50_000;
    });
    expect([...reasons].sort()).toEqual(['allowed', 'limited']);
  });

  it("fails a check whose stored state lacks numbers, rather than filling them from another key's", async () => {
    const prefix = uniquePrefix('short');
    const limiter = createLimiter({
      policies: { limit: 5, window: '1m' },
      store: new RedisStore({ client: redis, prefix }),
      denyCache: false,
      onStoreError: 'throw',
    });
    await limiter.consume('whole');
    await limiter.consume('cut');
    const cutKeys = await redis.keys(`${prefix}*cut*`);
    expect(cutKeys).toHaveLength(1);
    await redis.set(cutKeys[0] as string, '5', 'PX', 60_000); // a level without the time it was true
    // One tick, one script call: 'whole' is decided first, and its numbers must not fill in 'cut''s.
    const [, cut] = await Promise.allSettled([limiter.consume('whole'), limiter.consume('cut')]);
    expect(cut.status).toBe('rejected');
  });

  it('keeps and answers bucket levels beyond 1e14 units exactly, as a MemoryStore does', async () => {
    // 1e9 per hour: a bucket holds 3.6e15 units, more digits than Lua writes by default.
    let nowMs = 1_700_000_000_000;
    const clock = () => nowMs;
    const options = {
      policies: [
        { limit: 1_000_000_000, window: '1h' },
        { limit: 7, window: '1s', burst: 9 },
      ],
      denyCache: false,
      onStoreError: 'throw',
    } as const;
    const onRedis = createLimiter({
      ...options,
      store: new RedisStore({ client: redis, prefix: uniquePrefix('big'), clock }),
    });
    const inMemory = createLimiter({ ...options, store: new MemoryStore({ clock }) });
    for (let i = 0; i < 12; i++) {
      nowMs += 37 * i;
      const [batched, oneByOne] = [
        await onRedis.consume('k', { cost: 1 + (i % 3) }),
        await inMemory.consume('k', { cost: 1 + (i % 3) }),
      ];
      expect(batched).toEqual(oneByOne);
    }
  });

  it('stores a level beyond 1e14 units with all its digits, on the paths for a key of one policy', async () => {
    // About a million per 30 days, in numbers with many digits: a full bucket is about 2.6e15 units and a
    // token about 2.6e9, so a bucket a few tokens short is a 16-digit number that Lua's own conversion
    // (14 digits) would round.
    const nowMs = 1_700_000_000_000;
    const clock = () => nowMs;
    const options = { policies: { limit: 1_000_003, window: 2_592_000_007 }, denyCache: false } as const;
    const prefix = uniquePrefix('big1');
    const onRedis = createLimiter({
      ...options,
      store: new RedisStore({ client: redis, prefix, clock }),
    });
    const inMemory = createLimiter({ ...options, store: new MemoryStore({ clock }) });
    for (let i = 0; i < 4; i++) {
      // A key alone in its script call, and a key that comes twice in one (held between its checks).
      const alone = await onRedis.consume('alone', { cost: 3 });
      const twice = await Promise.all([onRedis.consume('twice'), onRedis.consume('twice', { cost: 2 })]);
      expect(alone).toEqual(await inMemory.consume('alone', { cost: 3 }));
      expect(twice).toEqual([await inMemory.consume('twice'), await inMemory.consume('twice', { cost: 2 })]);
    }
    // 12 tokens spent: (1,000,003 - 12) tokens of 2,592,000,007 units, a number of 16 significant digits.
    for (const key of ['alone', 'twice']) {
      const [stored] = await redis.keys(`${prefix}*${key}*`);
      const level = String(await redis.get(stored as string)).split(':')[0];
      expect(level, key).toBe(String((1_000_003 - 12) * 2_592_000_007));
    }
  });

  it('answers every check of a key Redis has no memory to write with an error, and changes nothing', async () => {
    const server = await startRedisServer(['--maxmemory-policy', 'noeviction']);
    const client = await connectRedis(server.url);
    try {
      const prefix = uniquePrefix('oom');
      const limiter = createLimiter({
        store: new RedisStore({ client, prefix }),
        policies: { limit: 3, window: '1h' },
        onStoreError: 'throw',
      });
      await limiter.consume('old');
      await client.config('SET', 'maxmemory', '1'); // every write is now refused; reads still work
      const outcomes = await Promise.allSettled(['old', 'new', 'old'].map((key) => limiter.consume(key)));
      for (const outcome of outcomes) {
        expect(outcome.status).toBe('rejected');
        expect((outcome as PromiseRejectedResult).reason.message).toMatch(/OOM/);
      }
      await client.config('SET', 'maxmemory', '0');
      expect((await limiter.consume('old')).decidedBy.remaining).toBe(1);
      expect((await limiter.consume('new')).decidedBy.remaining).toBe(2);
    } finally {
      client.disconnect();
      await server.stop();
    }
  });

  it('groups checks by the slot Redis Cluster gives their keys', async () => {
    const cluster = await connectCluster();
    try {
      const keys = ['tollgate:{login/ip:10.0.0.1}:abc', 'plain', '{}x', 'a{}b{c}', 'ü{ñ}', 'x{}'];
      for (const key of keys) {
        expect(clusterSlot(key), key).toBe(await cluster.call('CLUSTER', 'KEYSLOT', key));
      }
    } finally {
      cluster.disconnect();
    }
  });

  it('rejects bad options at construction', () => {
    expect(() => new RedisStore({ client: { evalsha: async () => 0 } } as never)).toThrow(
      /needs \{ client \}/,
    );
    expect(() => new RedisStore({} as never)).toThrow(
      new TypeError(
        'RedisStore needs { client }: a node-redis (v4 to v6) client or cluster, a Valkey GLIDE GlideClient ' +
          'or GlideClusterClient, or an ioredis or iovalkey Redis or Cluster; got undefined',
      ),
    );
    expect(() => new RedisStore({ client: redis, prefix: 'a{b' })).toThrow(/prefix/);
    expect(() => new RedisStore({ client: redis, clock: 1 as never })).toThrow(/clock/);
  });
});
