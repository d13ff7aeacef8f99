/**
 * RedisStore on a server that runs no scripts (EVALSHA and EVAL renamed away, as an operator may do, or a
 * Valkey without its Lua engine): one clear log line saying so and what Tollgate needs, and every check
 * limited by the insurance limiter meanwhile, through ioredis and node-redis.
 */
import { createConcurrencyLimiter, createLimiter, type RedisClientLike, RedisStore } from '@tollgate/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNodeRedis, connectRedis } from '../harness/clients.js';
import { type RedisProcess, startRedisServer } from '../harness/redis-server.js';

let server: RedisProcess;

beforeAll(async () => {
  server = await startRedisServer([
    ...['--rename-command', 'EVALSHA', ''],
    ...['--rename-command', 'EVAL', ''],
  ]);
});

afterAll(async () => {
  await server.stop();
});

/** A client of the test server, and how to close it. */
type Connect = () => Promise<{ client: RedisClientLike; close(): unknown }>;

const CLIENTS: readonly (readonly [string, Connect])[] = [
  [
    'ioredis',
    async () => {
      const client = await connectRedis(server.url);
      return { client, close: () => client.disconnect() };
    },
  ],
  [
    'node-redis 5',
    async () => {
      const client = await connectNodeRedis(5, server.url);
      return { client, close: () => client.disconnect() };
    },
  ],
];

describe.each(CLIENTS)('RedisStore on a server without scripting (%s)', (_name, connect) => {
  it('logs once that Redis runs no scripts, and the insurance limiter limits every check', async () => {
    const { client, close } = await connect();
    try {
      const lines: string[] = [];
      const logger = { warn: (line: string) => lines.push(line), error: (line: string) => lines.push(line) };
      const store = new RedisStore({ client, logger });
      const limiter = createLimiter({ store, policies: { limit: 2, window: '1h' } });
      const decisions = [];
      for (let i = 0; i < 5; i++) decisions.push(await limiter.consume('no-scripting'));
      expect(decisions.map((d) => [d.allowed, d.degraded])).toEqual([
        [true, true],
        [true, true],
        [false, true],
        [false, true],
        [false, true],
      ]);
      const leases = createConcurrencyLimiter({ store, limit: 1 });
      expect(await leases.acquire('no-scripting')).toMatchObject({ acquired: true, degraded: true });

      const said = lines.filter((line) => line.includes('runs no Lua scripts'));
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(
        /^\[TOLLGATE_STORE_ERROR\] Redis runs no Lua scripts here \(ERR unknown command 'evalsha'\)/i,
      );
      expect(said[0]).toContain('Tollgate needs EVALSHA and EVAL');
      expect(
        lines.some((line) => line.includes('ACL SETUSER')),
        'not mistaken for an ACL refusal',
      ).toBe(false);
    } finally {
      await close();
    }
  });
});
