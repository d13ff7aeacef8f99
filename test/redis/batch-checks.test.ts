/**
 * Checks alike but for their key, as a process under load sends them, go to Redis as one call of the
 * algorithm's batch script (each on a key of its own, or all on one key): each is decided as the
 * MemoryStore decides it, a key Redis refuses fails only its own checks, a batch run past its deadline
 * changes nothing, and the previous release reads what it writes.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  type AlgorithmName,
  createLimiter,
  type Decision,
  type Limiter,
  type LimiterOptions,
  MemoryStore,
  type Policy,
  RedisStore,
} from '@tollgate/core';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, uniquePrefix } from '../harness/clients.js';
import { commandCounts, type RedisProcess, startRedisServer } from '../harness/redis-server.js';

let server: RedisProcess;
let client: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  client = await connectRedis(server.url);
});

afterAll(async () => {
  client.disconnect();
  await server.stop();
});

const ALGORITHMS: readonly AlgorithmName[] = ['token-bucket', 'fixed-window', 'sliding-window'];

/**
 * What the batch tests run on: one policy of each algorithm, and pairs that put each algorithm first and
 * second; each by its scripts' file names (`<stem>-batch.lua`, `<stem>-hot.lua`). The first policy allows
 * 3 a minute.
 */
const CASES: readonly { name: string; stem: string; policies: Policy | Policy[] }[] = [
  ...ALGORITHMS.map((algorithm) => ({
    name: algorithm,
    stem: `check-${algorithm}`,
    policies: { limit: 3, window: '1m', algorithm },
  })),
  ...(
    [
      ['token-bucket', 'fixed-window'],
      ['fixed-window', 'sliding-window'],
      ['sliding-window', 'token-bucket'],
    ] as const
  ).map(([first, second]) => ({
    name: `${first} and ${second}`,
    stem: `check-${first}-and-${second}`,
    policies: [
      { limit: 3, window: '1m', algorithm: first, name: 'minute' },
      { limit: 5, window: '1h', algorithm: second, name: 'hour' },
    ],
  })),
];
const OWNERS = ['a', 'b', 'c', 'd', 'e', 'f'];

/** What a decision says, as both stores must say it. */
function outcome(decision: Decision) {
  const { remaining, resetMs, nextTokenMs, retryAfterMs } = decision.decidedBy;
  return {
    allowed: decision.allowed,
    degraded: decision.degraded,
    remaining,
    resetMs,
    nextTokenMs,
    retryAfterMs,
  };
}

/** A committed script of the Redis store, as Redis runs it. */
function committedScript(file: string): string {
  return readFileSync(
    new URL(`../../packages/core/src/stores/redis/script/lua/${file}`, import.meta.url),
    'utf8',
  );
}

/** Whether Redis has run (and so holds) the committed script `file`. */
async function scriptRan(file: string): Promise<boolean> {
  const sha = createHash('sha1').update(committedScript(file)).digest('hex');
  const [exists] = (await client.script('EXISTS', sha)) as number[];
  return exists === 1;
}

/** The script calls Redis ran, and the reads its scripts ran, by name, since the server started. */
async function scriptCalls(): Promise<{ evalsha: number; eval: number; mget: number; get: number }> {
  const counts = await commandCounts(server.port);
  return {
    evalsha: counts.evalsha ?? 0,
    eval: counts.eval ?? 0,
    mget: counts.mget ?? 0,
    get: counts.get ?? 0,
  };
}

/**
 * A batch of checks on distinct keys, one of which Redis refuses (a key of another type): that check
 * fails, the others are decided, and the refused key is left as it was.
 */
async function expectRefusedKeyAlone(name: string, options: Omit<LimiterOptions, 'store'>): Promise<void> {
  const prefix = uniquePrefix(name);
  const limiter = createLimiter({
    ...options,
    store: new RedisStore({ client, prefix, logger: { warn: () => {}, error: () => {} } }),
    onStoreError: 'throw',
  });
  await limiter.consume('c');
  const [key] = await client.keys(`${prefix}*c}*`);
  expect(key).toBeDefined();
  await client.del(key as string);
  await client.hset(key as string, 'not', 'a limiter state');

  const settled = await Promise.allSettled(OWNERS.map((owner) => limiter.consume(owner)));
  expect(settled.map((s) => (s.status === 'fulfilled' ? s.value.allowed : s.reason.code))).toEqual([
    true,
    true,
    'TOLLGATE_STORE_REFUSED',
    true,
    true,
    true,
  ]);
  expect(await client.hget(key as string, 'not')).toBe('a limiter state');
}

describe.each(CASES)('a batch of $name checks alike but for their key', ({ stem, policies: policy }) => {
  it('goes as one script call, and each check is decided as the MemoryStore decides it', async () => {
    let nowMs = 1_767_225_600_000;
    const clock = () => nowMs;
    const redis = createLimiter({
      store: new RedisStore({ client, prefix: uniquePrefix('batch'), clock }),
      policies: policy,
    });
    const memory = createLimiter({ store: new MemoryStore({ clock }), policies: policy });
    const both = async (run: (limiter: Limiter) => Promise<Decision[]>) => {
      const [fromRedis, fromMemory] = [await run(redis), await run(memory)];
      expect(fromRedis.map(outcome)).toEqual(fromMemory.map(outcome));
      return fromRedis;
    };
    const wave = (limiter: Limiter, cost = 1) =>
      Promise.all(OWNERS.map((owner) => limiter.consume(owner, { cost })));

    // 'a' at its limit, 'b' one short of it, one at a time.
    await both(async (limiter) => {
      const decisions = [];
      for (const owner of ['a', 'a', 'a', 'b', 'b']) decisions.push(await limiter.consume(owner));
      return decisions;
    });
    const before = await scriptCalls();
    expect(await scriptRan(`${stem}-batch.lua`)).toBe(false);
    const first = await both((limiter) => wave(limiter));
    const after = await scriptCalls();
    expect(await scriptRan(`${stem}-batch.lua`)).toBe(true);
    // The six, started in one turn of the event loop, go as one call: EVALSHA, then (the script being
    // new to this Redis) EVAL.
    expect([after.evalsha - before.evalsha, after.eval - before.eval]).toEqual([1, 1]);
    // The six keys are read by one MGET, and by no GET.
    expect([after.mget - before.mget, after.get - before.get]).toEqual([1, 0]);
    expect(first.map((d) => d.allowed)).toEqual([false, true, true, true, true, true]);

    nowMs += 20_000; // a third of the window: the token bucket has refilled one token
    const second = await both((limiter) => wave(limiter, 2));
    expect(second.some((d) => d.allowed)).toBe(true);
    expect(second.some((d) => !d.allowed)).toBe(true);
    nowMs += 60_000;
    await both((limiter) => wave(limiter, 3));
  });

  it('with a fractional cost, answers each check in all its digits, as the MemoryStore decides it', async () => {
    const nowMs = 1_767_225_600_000;
    const clock = () => nowMs;
    const redis = createLimiter({
      store: new RedisStore({ client, prefix: uniquePrefix('batch-fraction'), clock }),
      policies: policy,
    });
    const memory = createLimiter({ store: new MemoryStore({ clock }), policies: policy });
    const wave = (limiter: Limiter, cost: number) =>
      Promise.all(OWNERS.map((owner) => limiter.consume(owner, { cost })));
    for (const cost of [1, 0.7, 1.3, 0.7]) {
      const [fromRedis, fromMemory] = [await wave(redis, cost), await wave(memory, cost)];
      expect(fromRedis.map(outcome)).toEqual(fromMemory.map(outcome));
    }
    expect(await scriptRan(`${stem}-batch.lua`)).toBe(true);
  });

  it('after a clock that stepped back, keeps the time each key was written at, as the MemoryStore does', async () => {
    let nowMs = 1_767_225_600_000;
    const clock = () => nowMs;
    const redis = createLimiter({
      store: new RedisStore({ client, prefix: uniquePrefix('batch-clock-back'), clock }),
      policies: policy,
    });
    const memory = createLimiter({ store: new MemoryStore({ clock }), policies: policy });
    const wave = (limiter: Limiter) => Promise.all(OWNERS.map((owner) => limiter.consume(owner)));
    const peeks = (limiter: Limiter) => Promise.all(OWNERS.map((owner) => limiter.peek(owner)));
    const steps = [0, -10_000, 25_000, 0];
    for (const [i, step] of steps.entries()) {
      nowMs += step;
      const [fromRedis, fromMemory] = [await wave(redis), await wave(memory)];
      expect(fromRedis.map(outcome), `wave ${i}`).toEqual(fromMemory.map(outcome));
      // The wave after the step back applies its checks, and so writes each key's state.
      if (i === 1) expect(fromRedis.every((d) => d.allowed)).toBe(true);
      expect((await peeks(redis)).map(outcome), `after wave ${i}`).toEqual(
        (await peeks(memory)).map(outcome),
      );
    }
    expect(await scriptRan(`${stem}-batch.lua`)).toBe(true);
  });

  it("on the server's clock: admits each key's limit and no more", async () => {
    const limiter = createLimiter({
      store: new RedisStore({ client, prefix: uniquePrefix('batch-server-clock') }),
      policies: policy,
    });
    const owners = Array.from({ length: 40 }, (_, i) => `owner-${i}`);
    let admitted = 0;
    for (let round = 0; round < 5; round++) {
      const decisions = await Promise.all(owners.map((owner) => limiter.consume(owner)));
      expect(decisions.every((d) => !d.degraded)).toBe(true);
      admitted += decisions.filter((d) => d.allowed).length;
    }
    expect(admitted).toBe(3 * owners.length);
  });

  it('a key Redis refuses fails alone: the other checks of the batch are decided', async () => {
    await expectRefusedKeyAlone('batch-refused', { policies: policy });
  });
});

describe.each(ALGORITHMS)('a batch of %s checks with a ban, alike but for their key', (algorithm) => {
  const stem = `check-${algorithm}-ban`;
  const policies: Policy = { limit: 3, window: '1m', algorithm };
  const ban = { after: 2, duration: '1m' } as const;

  it('goes as one script call, and each check is decided as the MemoryStore decides it', async () => {
    let nowMs = 1_767_225_600_000;
    const clock = () => nowMs;
    const redis = createLimiter({
      store: new RedisStore({ client, prefix: uniquePrefix('ban-batch'), clock }),
      policies,
      ban,
      denyCache: false,
    });
    const memory = createLimiter({ store: new MemoryStore({ clock }), policies, ban, denyCache: false });
    const wave = async (cost = 1) => {
      const run = (limiter: Limiter) => Promise.all(OWNERS.map((owner) => limiter.consume(owner, { cost })));
      const [fromRedis, fromMemory] = [await run(redis), await run(memory)];
      expect(fromRedis.map(outcome)).toEqual(fromMemory.map(outcome));
      return fromRedis;
    };
    // 'a' at its limit and one refusal short of a ban, one at a time.
    for (const limiter of [redis, memory]) for (let i = 0; i < 4; i++) await limiter.consume('a');

    const before = await scriptCalls();
    expect(await scriptRan(`${stem}-batch.lua`)).toBe(false);
    const first = await wave();
    const after = await scriptCalls();
    expect(await scriptRan(`${stem}-batch.lua`)).toBe(true);
    expect([after.evalsha - before.evalsha, after.eval - before.eval]).toEqual([1, 1]);
    // 'a' is refused once more, which bans it; the others are admitted.
    expect(first.map((d) => d.allowed)).toEqual([false, true, true, true, true, true]);
    await wave(2); // the others at their limit
    await wave(); // refused once
    const banned = await wave(); // refused twice: banned
    expect(banned.every((d) => !d.allowed)).toBe(true);
    nowMs += 30_000; // within the ban, though the buckets have refilled some
    expect((await wave()).every((d) => !d.allowed)).toBe(true);
    nowMs += 100_000; // past it, and past the windows that counted
    expect((await wave()).every((d) => d.allowed)).toBe(true);
    await wave(0.5);
  });

  it('a key Redis refuses fails alone: the other checks of the batch are decided', async () => {
    await expectRefusedKeyAlone('ban-batch-refused', { policies, ban });
  });

  it("on the server's clock: admits each key's limit and no more, then bans", async () => {
    const limiter = createLimiter({
      store: new RedisStore({ client, prefix: uniquePrefix('ban-batch-server-clock') }),
      policies,
      ban,
    });
    const owners = Array.from({ length: 40 }, (_, i) => `owner-${i}`);
    let admitted = 0;
    let banned = 0;
    for (let round = 0; round < 6; round++) {
      const decisions = await Promise.all(owners.map((owner) => limiter.consume(owner)));
      expect(decisions.every((d) => !d.degraded)).toBe(true);
      admitted += decisions.filter((d) => d.allowed).length;
      banned = decisions.filter((d) => d.reason === 'banned').length;
    }
    expect(admitted).toBe(3 * owners.length);
    expect(banned).toBe(owners.length);
  });
});

describe.each(ALGORITHMS)('a batch of %s checks reading overrides, alike but for their key', (algorithm) => {
  const stem = `check-${algorithm}-overridable`;
  const policies: Policy = { limit: 3, window: '1m', algorithm };

  it('goes as one script call, and each check is decided as the MemoryStore decides it', async () => {
    let nowMs = 1_767_225_600_000;
    const clock = () => nowMs;
    const options = { policies, overrides: true, denyCache: false } as const;
    const redis = createLimiter({
      ...options,
      store: new RedisStore({ client, prefix: uniquePrefix('overridable-batch'), clock }),
    });
    const memory = createLimiter({ ...options, store: new MemoryStore({ clock }) });
    const wave = async (cost = 1) => {
      const run = (limiter: Limiter) => Promise.all(OWNERS.map((owner) => limiter.consume(owner, { cost })));
      const [fromRedis, fromMemory] = [await run(redis), await run(memory)];
      expect(fromRedis.map(outcome)).toEqual(fromMemory.map(outcome));
      return fromRedis;
    };
    // 'b' may take 6 for 30 s, 'c' 1 until it is removed.
    for (const limiter of [redis, memory]) {
      await limiter.setOverride('b', 6, { ttl: '30s' });
      await limiter.setOverride('c', 1);
    }

    const before = await scriptCalls();
    expect(await scriptRan(`${stem}-batch.lua`)).toBe(false);
    await wave();
    const after = await scriptCalls();
    expect(await scriptRan(`${stem}-batch.lua`)).toBe(true);
    expect([after.evalsha - before.evalsha, after.eval - before.eval]).toEqual([1, 1]);
    // 'c' has used its one; the others have room for 2 more, and 'b' for 5.
    expect((await wave(2)).map((d) => d.allowed)).toEqual([true, true, false, true, true, true]);
    expect((await wave(2)).map((d) => d.allowed)).toEqual([false, true, false, false, false, false]);
    nowMs += 40_000; // 'b''s override has ended: what it used is read in the policy's terms
    await wave();
    for (const limiter of [redis, memory]) await limiter.removeOverride('c');
    nowMs += 20_000;
    await wave();
    await wave(0.5);
  });
});

describe.each(CASES)('a batch of $name checks all on one key', ({ stem, policies: policy }) => {
  it('reads and writes the key once, and each check is decided as the MemoryStore decides it', async () => {
    let nowMs = 1_767_225_600_000;
    const clock = () => nowMs;
    const redis = createLimiter({
      store: new RedisStore({ client, prefix: uniquePrefix('hot'), clock }),
      policies: policy,
    });
    const memory = createLimiter({ store: new MemoryStore({ clock }), policies: policy });
    const both = async (run: (limiter: Limiter) => Promise<Decision[]>) => {
      const [fromRedis, fromMemory] = [await run(redis), await run(memory)];
      expect(fromRedis.map(outcome)).toEqual(fromMemory.map(outcome));
      return fromRedis;
    };
    const wave = (limiter: Limiter, cost = 1) =>
      Promise.all(Array.from({ length: 6 }, () => limiter.consume('hot', { cost })));

    await both(async (limiter) => [await limiter.consume('hot')]);
    const before = await commandCounts(server.port);
    expect(await scriptRan(`${stem}-hot.lua`)).toBe(false);
    const first = await both((limiter) => wave(limiter));
    const after = await commandCounts(server.port);
    expect(await scriptRan(`${stem}-hot.lua`)).toBe(true);
    // The six go as one call (EVALSHA, then EVAL: the script is new to this Redis), which reads the key
    // once and writes it once.
    const delta = (name: string) => (after[name] ?? 0) - (before[name] ?? 0);
    expect(['evalsha', 'eval', 'get', 'set'].map(delta)).toEqual([1, 1, 1, 1]);
    expect(first.map((d) => d.allowed)).toEqual([true, true, false, false, false, false]);

    nowMs += 20_000; // a third of the window: the token bucket has refilled one token
    await both((limiter) => wave(limiter));
    nowMs += 60_000;
    await both((limiter) => wave(limiter, 2));
    nowMs += 120_000;
    await both((limiter) => wave(limiter, 3));
  });

  it("on the server's clock: 40 checks at once on one key admit its limit and no more", async () => {
    const limiter = createLimiter({
      store: new RedisStore({ client, prefix: uniquePrefix('hot-server-clock') }),
      policies: policy,
    });
    let admitted = 0;
    for (let round = 0; round < 5; round++) {
      const decisions = await Promise.all(Array.from({ length: 40 }, () => limiter.consume('hot')));
      expect(decisions.every((d) => !d.degraded)).toBe(true);
      admitted += decisions.filter((d) => d.allowed).length;
    }
    expect(admitted).toBe(3);
  });

  it('a key Redis refuses to read fails every check of the batch, and changes nothing', async () => {
    const prefix = uniquePrefix('hot-refused');
    const limiter = createLimiter({
      store: new RedisStore({ client, prefix, logger: { warn: () => {}, error: () => {} } }),
      policies: policy,
      onStoreError: 'throw',
    });
    await limiter.consume('hot');
    const [key] = await client.keys(`${prefix}*hot}*`);
    expect(key).toBeDefined();
    await client.del(key as string);
    await client.hset(key as string, 'not', 'a limiter state');
    const settled = await Promise.allSettled(Array.from({ length: 6 }, () => limiter.consume('hot')));
    expect(settled.map((s) => (s.status === 'rejected' ? s.reason.code : s.value.allowed))).toEqual(
      Array(6).fill('TOLLGATE_STORE_REFUSED'),
    );
    expect(await client.hget(key as string, 'not')).toBe('a limiter state');
  });
});

describe.each(ALGORITHMS)('a batch of %s checks with a ban, all on one key', (algorithm) => {
  const stem = `check-${algorithm}-ban`;
  const policies: Policy = { limit: 3, window: '1m', algorithm };
  const ban = { after: 2, duration: '1m' } as const;

  it('reads and writes the key once, and each check is decided as the MemoryStore decides it', async () => {
    let nowMs = 1_767_225_600_000;
    const clock = () => nowMs;
    const redis = createLimiter({
      store: new RedisStore({ client, prefix: uniquePrefix('ban-hot'), clock }),
      policies,
      ban,
      denyCache: false,
    });
    const memory = createLimiter({ store: new MemoryStore({ clock }), policies, ban, denyCache: false });
    const wave = async (cost = 1) => {
      const run = (limiter: Limiter) =>
        Promise.all(Array.from({ length: 6 }, () => limiter.consume('login', { cost })));
      const [fromRedis, fromMemory] = [await run(redis), await run(memory)];
      // With why each was refused, and the whole wait (a ban's).
      const full = (d: Decision) => ({ ...outcome(d), reason: d.reason, waitMs: d.retryAfterMs });
      expect(fromRedis.map(full)).toEqual(fromMemory.map(full));
      return fromRedis;
    };
    for (const limiter of [redis, memory]) await limiter.consume('login');

    const before = await commandCounts(server.port);
    expect(await scriptRan(`${stem}-hot.lua`)).toBe(false);
    // Two admitted, two refused, which starts the ban, and two refused by the ban: all in one call, which
    // reads the key once and writes it once.
    const first = await wave();
    const after = await commandCounts(server.port);
    expect(await scriptRan(`${stem}-hot.lua`)).toBe(true);
    const delta = (name: string) => (after[name] ?? 0) - (before[name] ?? 0);
    expect(['evalsha', 'eval', 'get', 'set'].map(delta)).toEqual([1, 1, 1, 1]);
    expect(first.map((d) => d.allowed)).toEqual([true, true, false, false, false, false]);

    nowMs += 30_000; // within the ban, though the bucket has refilled some
    expect((await wave()).every((d) => !d.allowed)).toBe(true);
    nowMs += 100_000; // past it, and past the window that counted
    const later = await wave();
    expect(later.some((d) => d.allowed)).toBe(true);
    await wave(0.5);
    nowMs += 200_000;
    await wave(4); // more than the limit: refused, counted toward a ban
  });

  it("on the server's clock: 40 checks at once on one key admit its limit, then ban it", async () => {
    const limiter = createLimiter({
      store: new RedisStore({ client, prefix: uniquePrefix('ban-hot-server-clock') }),
      policies,
      ban,
    });
    const decisions = await Promise.all(Array.from({ length: 40 }, () => limiter.consume('login')));
    expect(decisions.every((d) => !d.degraded)).toBe(true);
    expect(decisions.filter((d) => d.allowed)).toHaveLength(3);
    const last = decisions.at(-1) as Decision;
    expect(last.retryAfterMs).toBeGreaterThan(55_000); // the ban's minute, not the bucket's 20 s
  });

  it('a key Redis refuses to read fails every check of the batch, and changes nothing', async () => {
    const prefix = uniquePrefix('ban-hot-refused');
    const limiter = createLimiter({
      store: new RedisStore({ client, prefix, logger: { warn: () => {}, error: () => {} } }),
      policies,
      ban,
      onStoreError: 'throw',
    });
    await limiter.consume('login');
    const [key] = await client.keys(`${prefix}*login}*`);
    expect(key).toBeDefined();
    await client.del(key as string);
    await client.hset(key as string, 'not', 'a limiter state');
    const settled = await Promise.allSettled(Array.from({ length: 6 }, () => limiter.consume('login')));
    expect(settled.map((s) => (s.status === 'rejected' ? s.reason.code : s.value.allowed))).toEqual(
      Array(6).fill('TOLLGATE_STORE_REFUSED'),
    );
    expect(await client.hget(key as string, 'not')).toBe('a limiter state');
  });
});

describe('a batch Redis refuses to write (maxmemory reached)', () => {
  it.each(['distinct keys', 'one key'])(
    'on %s: every check that would write answers the refusal, and nothing is written',
    async (shape) => {
      const prefix = uniquePrefix('batch-oom');
      const limiter = createLimiter({
        store: new RedisStore({ client, prefix, logger: { warn: () => {}, error: () => {} } }),
        policies: { limit: 3, window: '1m' },
        onStoreError: 'throw',
      });
      const owners = shape === 'one key' ? Array(6).fill('hot') : OWNERS;
      await Promise.all([...new Set(owners)].map((owner) => limiter.consume(owner)));
      const stored = await client.keys(`${prefix}*`);
      const before = await Promise.all(stored.map((key) => client.get(key)));
      await client.config('SET', 'maxmemory', '1');
      try {
        const settled = await Promise.allSettled(owners.map((owner) => limiter.consume(owner)));
        // One call: on one key its one write fails, on distinct keys each key's.
        expect(settled.map((s) => (s.status === 'rejected' ? s.reason.code : s.value.allowed))).toEqual(
          Array(6).fill('TOLLGATE_STORE_REFUSED'),
        );
      } finally {
        await client.config('SET', 'maxmemory', '0');
      }
      expect(await Promise.all(stored.map((key) => client.get(key)))).toEqual(before);
    },
  );
});

describe('the batch script past its deadline', () => {
  it('answers -1 for every check and writes nothing', async () => {
    const source = committedScript('check-fixed-window-batch.lua');
    const prefix = uniquePrefix('batch-expired');
    const keys = [`${prefix}{a}:x`, `${prefix}{b}:x`];
    const [seconds] = await client.time();
    const past = String(Number(seconds) * 1000 - 1_000);
    const answers = await client.eval(source, keys.length, ...keys, '3', '60000', '1', past);
    expect((answers as number[]).slice(1)).toEqual([-1, -1]);
    expect(await client.exists(...keys)).toBe(0);
    // Before its deadline, the same call decides both: each applied, answered by the state written
    // (the window's start, then 1 counted).
    const future = String(Number(seconds) * 1000 + 60_000);
    const decided = await client.eval(source, keys.length, ...keys, '3', '60000', '1', future);
    expect((decided as unknown[]).slice(1)).toEqual([
      expect.stringMatching(/^\d+:1$/),
      expect.stringMatching(/^\d+:1$/),
    ]);
    expect(await client.exists(...keys)).toBe(2);
  });
});

describe('the batch scripts during a rolling deploy', () => {
  const PREVIOUS_SETTLE = readFileSync(
    new URL('./fixtures/settle-script-before-single-checks.lua', import.meta.url),
    'utf8',
  );
  const CODES = { 'token-bucket': [1, 2], 'fixed-window': [2, 2], 'sliding-window': [3, 3] } as const;

  it.each(ALGORITHMS)(
    "%s: the previous release's script and the batch script take turns on the same keys, and admit the limit",
    async (algorithm) => {
      const nowMs = 1_767_225_600_000;
      const prefix = uniquePrefix('batch-rolling');
      const limit = 10;
      const limiter = createLimiter({
        store: new RedisStore({ client, prefix, clock: () => nowMs }),
        policies: { limit, window: '1m', algorithm },
      });
      const [code, fields] = CODES[algorithm];
      const resolved = limiter.policies[0] as (typeof limiter.policies)[number];
      const { windowMs, capacityUnits } = resolved;
      const previousConsume = async (key: string) => {
        const args = [
          1,
          1,
          code,
          fields,
          limit,
          windowMs,
          capacityUnits,
          0,
          0,
          0,
          1,
          1,
          nowMs,
          '',
          1,
          'consume',
        ];
        const answer = (await client.eval(PREVIOUS_SETTLE, 1, key, ...args.map(String))) as number[];
        return answer[1] === 1;
      };
      await Promise.all(OWNERS.map((owner) => limiter.consume(owner))); // the batch script writes them
      const keys = await Promise.all(
        OWNERS.map(async (owner) => (await client.keys(`${prefix}*${owner}}*`))[0] as string),
      );
      let admitted = OWNERS.length;
      for (let turn = 0; turn < 6; turn++) {
        for (const key of keys) if (await previousConsume(key)) admitted++;
        const batch = await Promise.all(OWNERS.map((owner) => limiter.consume(owner)));
        admitted += batch.filter((d) => d.allowed).length;
      }
      expect(admitted).toBe(limit * OWNERS.length);
    },
  );
});
