/**
 * RedisStore as a least-privilege ACL user, through ioredis and node-redis 4 and 5: the rules
 * docs/production-redis.md gives (read from the page) are enough for every call — checks, refunds, resets,
 * leases — and exact. A user lacking any one of their commands gets one log line naming it, with the
 * rules to grant, while the insurance limiter decides; granting it recovers with no restart.
 */
import { readFile } from 'node:fs/promises';
import {
  createConcurrencyLimiter,
  createLimiter,
  type Decision,
  type RedisClientLike,
  RedisStore,
} from '@tollgate/core';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connectNodeRedis, connectRedis } from '../harness/clients.js';
import { type RedisProcess, startRedisServer, waitFor } from '../harness/redis-server.js';

/** The docs' `ACL SETUSER tollgate …` line: `reset on >password ~tollgate:* +evalsha …`. */
const DOCUMENTED = /^ACL SETUSER tollgate (reset on >\S+) (.+)$/m.exec(
  await readFile(new URL('../../docs/production-redis.md', import.meta.url), 'utf8'),
);
if (!DOCUMENTED) throw new Error('docs/production-redis.md has no "ACL SETUSER tollgate …" line');
/** The rules after the password: the key pattern and the commands, as the store's log line gives them. */
const RULES = (DOCUMENTED[2] as string).split(' ');
const COMMANDS = RULES.filter((rule) => rule.startsWith('+')).map((rule) => rule.slice(1));
/** ioredis's ready check sends INFO; Tollgate does not. */
const TOLLGATE_COMMANDS = COMMANDS.filter((command) => command !== 'info');
const LIMIT = 2;

let server: RedisProcess;
let admin: Redis;

beforeAll(async () => {
  server = await startRedisServer(); // ACL users are the server's: one of our own
  admin = await connectRedis(server.url);
});

afterAll(async () => {
  admin.disconnect();
  await server.stop();
});

beforeEach(async () => {
  await admin.script('FLUSH'); // so each client's first check needs EVAL as well as EVALSHA
});

/** A client of the test server, logged in as `user`, and how to close it. */
type Connect = (user: string) => Promise<{ client: RedisClientLike; close(): Promise<void> }>;

const urlOf = (user: string) => `redis://${user}:secret@${server.host}:${server.port}`;
const CLIENTS: readonly (readonly [string, Connect])[] = [
  [
    'ioredis',
    async (user) => {
      const client = await connectRedis(urlOf(user));
      return { client, close: async () => client.disconnect() };
    },
  ],
  ...([4, 5] as const).map(
    (major) =>
      [
        `node-redis ${major}`,
        async (user: string) => {
          const client = await connectNodeRedis(major, urlOf(user));
          return { client, close: () => client.disconnect() };
        },
      ] as const,
  ),
];

/** Creates (or replaces) `user` with the documented rules, with `change` applied to them. */
async function createUser(user: string, change: (rules: string[]) => string[] = (rules) => rules) {
  await admin.call('ACL', 'SETUSER', user, 'reset', 'on', '>secret', ...change(RULES));
}

/** A logger that keeps what it is given. */
function recorder() {
  const lines: string[] = [];
  return {
    lines,
    logger: { warn: (line: string) => lines.push(line), error: (line: string) => lines.push(line) },
  };
}

/**
 * Everything a store sends, each call on keys of its own under `name`: checks (TIME, GET, SET), a refund
 * that fills the bucket again (DEL in the script), a reset (DEL), a lease taken (ZREMRANGEBYSCORE, ZCARD,
 * ZADD, PEXPIRE) and released (ZREM), reservations by id made (ZRANGEBYSCORE, ZSCORE, HSET, ZRANGE; a
 * third with two settled, past maxOpen 1: ZREMRANGEBYRANK) and settled (HGET, HDEL, ZREM), and checks
 * that go together on keys of their own (one batch call: MGET). What each answered, or its error.
 */
async function useEverything(store: RedisStore, name: string) {
  const limiter = createLimiter({ store, policies: { limit: LIMIT, window: '1h' } });
  const leases = createConcurrencyLimiter({ store, limit: 1 });
  const settled = (promise: Promise<unknown>) =>
    promise.then(
      () => 'ok',
      (error: Error) => error.message,
    );
  const checks: Decision[] = [];
  for (let i = 0; i <= LIMIT; i++) checks.push(await limiter.consume(`${name}:a`));
  const refund = await settled(limiter.refund(`${name}:a`, LIMIT));
  const reset = await settled(limiter.reset(`${name}:b`));
  const lease = await leases.acquire(`${name}:c`);
  const release = await settled(lease.lease?.release() ?? Promise.resolve());
  const byId = createLimiter({ store, policies: { limit: LIMIT, window: '1h' }, maxOpen: 1 });
  const reservations: unknown[] = [];
  for (const id of ['r1', 'r2', 'r3']) {
    const { decision } = await byId.reserve(`${name}:d`, 1, { id });
    reservations.push(decision.degraded ? 'degraded' : decision.reason);
    if (id !== 'r3') reservations.push(await settled(byId.settle(`${name}:d`, id, 0)));
  }
  const together = await Promise.all(['e', 'f', 'g'].map((key) => limiter.consume(`${name}:${key}`)));
  return { checks, refund, reset, lease, release, reservations, together };
}

describe.each(CLIENTS)('RedisStore as an ACL user (%s)', (clientName, connect) => {
  it('with exactly the documented rules: every call is decided by Redis, exactly, and nothing is logged', async () => {
    const user = `tollgate-${clientName.replace(' ', '')}`;
    await createUser(user);
    const { client, close } = await connect(user);
    try {
      const { lines, logger } = recorder();
      const store = new RedisStore({ client, logger }); // the default prefix, which the rules name
      const used = await useEverything(store, `${user}:all`);
      expect(used.checks.map((d) => [d.allowed, d.degraded])).toEqual([
        [true, false],
        [true, false],
        [false, false],
      ]);
      expect(used).toMatchObject({ refund: 'ok', reset: 'ok', release: 'ok' });
      expect(used.reservations).toEqual(['allowed', 'ok', 'allowed', 'ok', 'allowed']);
      expect(used.lease).toMatchObject({ acquired: true, degraded: false });
      expect(used.together.map((d) => [d.allowed, d.degraded])).toEqual([
        [true, false],
        [true, false],
        [true, false],
      ]);

      const limiter = createLimiter({ store, policies: { limit: 100, window: '1h' }, onStoreError: 'throw' });
      const race = await Promise.all(Array.from({ length: 300 }, () => limiter.consume(`${user}:race`)));
      expect(race.filter((d) => d.allowed)).toHaveLength(100);
      // The eviction-policy check's CONFIG GET is refused, and skipped without a word.
      expect(lines).toEqual([]);
    } finally {
      await close();
    }
  });

  it.each(TOLLGATE_COMMANDS)(
    'without +%s: logs once that Redis refuses it, and what to grant',
    async (command) => {
      const user = `lacks-${command}-${clientName.replace(' ', '')}`;
      await createUser(user, (rules) => rules.filter((rule) => rule !== `+${command}`));
      const { client, close } = await connect(user);
      try {
        const { lines, logger } = recorder();
        const store = new RedisStore({ client, logger });
        const used = await useEverything(store, user);
        // Redis 7.0 names no command refused inside a script: the store asks it which, in the background.
        const refusals = () => lines.filter((line) => line.includes('ACL SETUSER'));
        await waitFor(async () => refusals().length > 0, 'the refusal to be logged', 5_000);
        expect(refusals()).toHaveLength(1);
        const [line] = refusals();
        expect(line).toMatch(
          /^\[TOLLGATE_STORE_ERROR\] Redis refuses the client's ACL user the (\S+) command /,
        );
        expect(line).toContain(`the ${command.toUpperCase()} command`);
        expect(line, 'the rules the store gives are the documented ones').toContain(
          `Tollgate needs: ACL SETUSER <user> ${RULES.join(' ')}`,
        );
        if (command === 'mget') {
          // Batched checks read their keys one by one: Redis decides them all, and the line is a warning.
          expect(used.together.map((d) => [d.allowed, d.degraded])).toEqual([
            [true, false],
            [true, false],
            [true, false],
          ]);
          expect(line).toContain('read their keys one by one');
        }
        if (['evalsha', 'eval', 'time', 'get', 'set'].includes(command)) {
          // Every check needs it: the insurance limiter decided them all, and limited.
          expect(used.checks.map((d) => [d.allowed, d.degraded])).toEqual([
            [true, true],
            [true, true],
            [false, true],
          ]);
        }
      } finally {
        await close();
      }
    },
  );

  it('with keys outside its key pattern: names the keys, and the insurance limiter decides', async () => {
    const user = `elsewhere-${clientName.replace(' ', '')}`;
    await createUser(user, (rules) => rules.map((rule) => (rule.startsWith('~') ? '~other:*' : rule)));
    const { client, close } = await connect(user);
    try {
      const { lines, logger } = recorder();
      const used = await useEverything(new RedisStore({ client, logger }), user);
      expect(used.checks.every((d) => d.degraded)).toBe(true);
      const refusals = lines.filter((line) => line.includes('ACL SETUSER'));
      expect(refusals).toHaveLength(1);
      expect(refusals[0]).toContain(
        "refuses the client's ACL user access to its keys under tollgate: (NOPERM",
      );
    } finally {
      await close();
    }
  });

  it('recovers with no restart once the refused command is granted', async () => {
    const user = `granted-later-${clientName.replace(' ', '')}`;
    await createUser(user, (rules) => rules.filter((rule) => rule !== '+get'));
    const { client, close } = await connect(user);
    try {
      const { lines, logger } = recorder();
      const store = new RedisStore({ client, logger, breaker: { cooldown: 50 } });
      const limiter = createLimiter({ store, policies: { limit: 10, window: '1h' } });
      for (let i = 0; i < 6; i++) expect((await limiter.consume(`${user}:k`)).degraded).toBe(true);
      expect(lines.filter((line) => line.startsWith('[TOLLGATE_STORE_UNAVAILABLE]'))).toHaveLength(1);
      await admin.call('ACL', 'SETUSER', user, '+get');
      await new Promise((resolve) => setTimeout(resolve, 60)); // the breaker's cooldown
      const decision = await limiter.consume(`${user}:k`);
      expect(decision).toMatchObject({ allowed: true, degraded: false });
      expect(lines.filter((line) => line.startsWith('[TOLLGATE_STORE_RECOVERED]'))).toHaveLength(1);
    } finally {
      await close();
    }
  });
});
