/**
 * Overrides on every store: one client's limits changed at runtime, read by the check's own store step
 * (so by every process at its next check), shown in the decision, ended by their ttl, and refused when
 * bad. The same scenarios run on the memory store, a real Redis and a real Redis Cluster.
 */
import {
  createLimiter,
  type Limiter,
  type LimiterOptions,
  MemoryStore,
  RedisStore,
  type Store,
  StoreUnavailableError,
} from '@tollgate/core';
import type { Cluster, Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { connectCluster, connectRedis, uniquePrefix } from '../harness/clients.js';
import { startRedisServer } from '../harness/redis-server.js';

const redis: Redis = await connectRedis();
const otherRedis: Redis = await connectRedis();
const cluster: Cluster = await connectCluster();
afterAll(() => {
  redis.disconnect();
  otherRedis.disconnect();
  cluster.disconnect();
});

/** A test clock, shared by the stores of one scenario: ms since the epoch. */
function testClock(start = 1_700_000_000_000) {
  const clock = { now: start, advance: (ms: number) => (clock.now += ms) };
  return clock;
}

/**
 * Two stores on the same buckets, as two app servers have them (on Redis, each with its own
 * connection), on one clock.
 */
type Stores = (clock: () => number) => [Store, Store];

const STORES: readonly (readonly [string, Stores])[] = [
  [
    'the memory store',
    (clock) => {
      const store = new MemoryStore({ clock });
      return [store, store];
    },
  ],
  [
    'Redis',
    (clock) => {
      const prefix = uniquePrefix('overrides');
      return [
        new RedisStore({ client: redis, prefix, clock }),
        new RedisStore({ client: otherRedis, prefix, clock }),
      ];
    },
  ],
  [
    'Redis Cluster',
    (clock) => {
      const prefix = uniquePrefix('overrides-cluster');
      return [
        new RedisStore({ client: cluster, prefix, clock }),
        new RedisStore({ client: cluster, prefix, clock }),
      ];
    },
  ],
];

async function admitted(limiter: Limiter, key: string, calls: number): Promise<number> {
  let allowed = 0;
  for (let i = 0; i < calls; i++) if ((await limiter.consume(key)).allowed) allowed++;
  return allowed;
}

describe.each(STORES)('overrides on %s', (_name, makeStores) => {
  function servers(options: Omit<LimiterOptions, 'store'>) {
    const clock = testClock();
    const [first, second] = makeStores(() => clock.now);
    const made = { ...options, overrides: true, namespace: 'api' } satisfies Omit<LimiterOptions, 'store'>;
    return {
      clock,
      a: createLimiter({ ...made, store: first }),
      b: createLimiter({ ...made, store: second }),
    };
  }

  it('raise one client’s limit for every server from its next check, and show it in the decision', async () => {
    const { a, b } = servers({ policies: { limit: 3, window: '1m', algorithm: 'fixed-window' } });
    expect(await admitted(b, 'key:acme', 4)).toBe(3);
    await a.setOverride('key:acme', 5);
    const decision = await b.consume('key:acme');
    expect(decision.allowed).toBe(true);
    expect(decision.decidedBy).toMatchObject({ limit: 5, capacity: 5, remaining: 1 });
    expect(await admitted(b, 'key:acme', 3)).toBe(1);
    // Others keep the policy's limit.
    expect(await admitted(b, 'key:other', 5)).toBe(3);
    expect((await b.peek('key:other')).decidedBy.limit).toBe(3);
  });

  it('cut a client’s limit without giving back what it used', async () => {
    const { a, b } = servers({ policies: { limit: 10, window: '1m', algorithm: 'fixed-window' } });
    expect(await admitted(b, 'key:abuser', 2)).toBe(2);
    await a.setOverride('key:abuser', 3);
    expect(await admitted(b, 'key:abuser', 5)).toBe(1);
    const refused = await b.consume('key:abuser');
    expect(refused).toMatchObject({ allowed: false, reason: 'limited' });
    expect(refused.decidedBy).toMatchObject({ limit: 3, remaining: 0 });
  });

  it('keep what a token bucket used when its burst is cut, and refill it at the new rate', async () => {
    const { a, b, clock } = servers({ policies: { limit: 60, window: '1m' } });
    expect(await admitted(b, 'key:t', 58)).toBe(58); // 2 left
    await a.setOverride('key:t', { limit: 6, burst: 5 }); // 58 used: none of the 5 left
    expect(await admitted(b, 'key:t', 1)).toBe(0);
    await a.setOverride('key:t', { limit: 6, burst: 2 });
    clock.advance(10_000); // one token at 6 a minute
    expect(await admitted(b, 'key:t', 2)).toBe(1);
    expect((await b.peek('key:t')).decidedBy).toMatchObject({ limit: 6, capacity: 2 });
  });

  it('end an override at its ttl in every process, and read it until then', async () => {
    const { a, b, clock } = servers({ policies: { limit: 2, window: '1m', algorithm: 'fixed-window' } });
    await a.setOverride('key:trial', 4, { ttl: '30s' });
    expect(await b.getOverride('key:trial')).toEqual({
      policies: [expect.objectContaining({ limit: 4, capacity: 4 })],
      expiresAtMs: clock.now + 30_000,
    });
    expect(await admitted(b, 'key:trial', 5)).toBe(4);
    clock.advance(30_000);
    expect(await b.getOverride('key:trial')).toBeUndefined();
    const after = await b.consume('key:trial');
    // Back to 2 a minute, with the 4 already used in this window counted.
    expect(after).toMatchObject({ allowed: false });
    expect(after.decidedBy).toMatchObject({ limit: 2 });
    clock.advance(30_000);
    expect(await admitted(b, 'key:trial', 3)).toBe(2);
  });

  it('remove an override, after which every process decides by the policies again', async () => {
    const { a, b } = servers({ policies: { limit: 2, window: '1m', algorithm: 'fixed-window' } });
    await a.setOverride('key:x', 10);
    expect(await admitted(b, 'key:x', 3)).toBe(3);
    await b.removeOverride('key:x');
    expect(await a.getOverride('key:x')).toBeUndefined();
    expect(await admitted(a, 'key:x', 1)).toBe(0);
    await b.removeOverride('key:never-had-one'); // nothing to remove is no error
  });

  it('override policies by name, keeping the others as they are', async () => {
    const { a, b } = servers({
      policies: [
        { limit: 2, window: '1s', name: 'burst', algorithm: 'fixed-window' },
        { limit: 100, window: '1h', name: 'hourly', algorithm: 'sliding-window' },
      ],
    });
    await a.setOverride('key:n', { burst: 5 });
    const decision = await b.consume('key:n');
    expect(decision.policies.map(({ policy, limit }) => [policy, limit])).toEqual([
      ['burst', 5],
      ['hourly', 100],
    ]);
    expect(await admitted(b, 'key:n', 5)).toBe(4);
    const override = await b.getOverride('key:n');
    expect(override?.policies.map(({ name, limit }) => [name, limit])).toEqual([
      ['burst', 5],
      ['hourly', 100],
    ]);
  });

  it('keep a bucket until the policy’s own limits have refilled it, once the override is removed', async () => {
    // Under the override the bucket is full after 1 minute; under the policy (burst 20) after 2.
    const { a, b, clock } = servers({ policies: { limit: 10, window: '1m', burst: 20 } });
    await a.setOverride('key:r', { limit: 10, burst: 10 });
    expect(await admitted(b, 'key:r', 11)).toBe(10);
    clock.advance(30_000);
    await a.removeOverride('key:r');
    // Refilled for 30 s at 10 a minute: 5 of the 10 still used, so 15 of the policy's 20, not a fresh 20.
    expect(await admitted(b, 'key:r', 20)).toBe(15);
  });

  it('refund, penalize and peek by the override too', async () => {
    const { a, b } = servers({ policies: { limit: 1, window: '1m', algorithm: 'fixed-window' } });
    await a.setOverride('key:p', 3);
    expect((await b.peek('key:p')).decidedBy).toMatchObject({ limit: 3, remaining: 3 });
    await b.penalty('key:p', 2);
    expect(await admitted(b, 'key:p', 2)).toBe(1);
    await b.refund('key:p', 2);
    expect(await admitted(b, 'key:p', 3)).toBe(2);
  });

  it('refuse a bad override when it is set, storing nothing', async () => {
    const { a, b } = servers({
      policies: [
        { limit: 2, window: '1s', name: 'burst', algorithm: 'fixed-window' },
        { limit: 100, window: '1h', name: 'hourly' },
      ],
    });
    await expect(a.setOverride('key:bad', 5)).rejects.toThrow(/2 policies; give each its limits by name/);
    await expect(a.setOverride('key:bad', { brust: 5 } as never)).rejects.toThrow(/names no policy.*burst/);
    await expect(a.setOverride('key:bad', { burst: 0 })).rejects.toThrow(
      /override\.burst\.limit must be a positive whole number/,
    );
    await expect(a.setOverride('key:bad', { burst: { limit: 5, burst: 9 } })).rejects.toThrow(
      /burst applies to the token bucket only/,
    );
    await expect(a.setOverride('key:bad', { hourly: { limit: 5, burst: 2.5 } })).rejects.toThrow(
      /override\.hourly\.burst/,
    );
    await expect(a.setOverride('key:bad', {})).rejects.toThrow(/names none of the policies/);
    await expect(a.setOverride('key:bad', { hourly: 5 }, { ttl: 'soon' })).rejects.toThrow(/ttl/);
    await expect(a.setOverride('key:bad', { hourly: 5 }, { tll: '1h' } as never)).rejects.toThrow(
      /unknown field.*ttl/,
    );
    await expect(a.setOverride('', { hourly: 5 })).rejects.toThrow(/non-empty string/);
    expect(await b.getOverride('key:bad')).toBeUndefined();
  });
});

describe('a limiter’s overrides option', () => {
  it('is needed for setOverride, removeOverride and getOverride', async () => {
    const limiter = createLimiter({ policies: { limit: 1, window: '1s' } });
    await expect(limiter.setOverride('k', 2)).rejects.toThrow(/createLimiter\(\{ overrides: true \}\)/);
    await expect(limiter.getOverride('k')).rejects.toThrow(TypeError);
  });

  it('must be true or false, and cannot be combined with token slices', () => {
    expect(() => createLimiter({ policies: { limit: 1, window: '1s' }, overrides: 'yes' as never })).toThrow(
      /overrides must be true or false/,
    );
    expect(() =>
      createLimiter({ policies: { limit: 100, window: '1s', slice: { size: 10 } }, overrides: true }),
    ).toThrow(/overrides cannot be combined with policy.slice/);
  });

  it('turns the deny cache off: another process may raise the limit at any moment', async () => {
    const prefix = uniquePrefix('overrides-deny');
    const policies = { limit: 1, window: '1h', algorithm: 'fixed-window' } as const;
    const reader = createLimiter({
      store: new RedisStore({ client: otherRedis, prefix }),
      policies,
      overrides: true,
    });
    const writer = createLimiter({
      store: new RedisStore({ client: redis, prefix }),
      policies,
      overrides: true,
    });
    expect(await admitted(reader, 'key:d', 3)).toBe(1);
    await writer.setOverride('key:d', 3);
    expect(await admitted(reader, 'key:d', 3)).toBe(2);
  });

  it('keeps a bucket on Redis at least as long as the policy’s limits need to refill it', async () => {
    const prefix = uniquePrefix('overrides-keep');
    const limiter = createLimiter({
      store: new RedisStore({ client: redis, prefix }),
      policies: { limit: 10, window: '1m', burst: 20 },
      overrides: true,
    });
    await limiter.setOverride('key:k', { limit: 10, burst: 10 });
    await limiter.consume('key:k', { cost: 10 });
    const [key] = (await redis.keys(`${prefix}*`)).filter((k) => !k.endsWith(':o'));
    // Under the override, 1 minute to full; under the policy, 2.
    expect(await redis.pttl(key as string)).toBeGreaterThan(110_000);
  });

  it('with Redis down, lets the insurance decide by the policies’ own limits, and rejects a change', async () => {
    const server = await startRedisServer();
    const client = await connectRedis(server.url);
    try {
      const limiter = createLimiter({
        store: new RedisStore({ client, prefix: uniquePrefix('overrides-down') }),
        policies: { limit: 2, window: '1h', algorithm: 'fixed-window' },
        overrides: true,
        timeout: 200,
      });
      await limiter.setOverride('key:o', 10);
      expect((await limiter.consume('key:o')).decidedBy.limit).toBe(10);
      await server.kill();
      const during = [
        await limiter.consume('key:o'),
        await limiter.consume('key:o'),
        await limiter.consume('key:o'),
      ];
      expect(during.map(({ degraded, allowed }) => [degraded, allowed])).toEqual([
        [true, true],
        [true, true],
        [true, false],
      ]);
      expect(during[0]?.decidedBy.limit).toBe(2);
      await expect(limiter.setOverride('key:o', 20)).rejects.toThrow(StoreUnavailableError);
      await expect(limiter.getOverride('key:o')).rejects.toThrow(StoreUnavailableError);
    } finally {
      client.disconnect();
      await server.stop();
    }
  });
});
