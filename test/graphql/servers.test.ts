/**
 * The cost limit in GraphQL Yoga, Apollo Server and Mercurius, on real sockets, on a MemoryStore and on
 * a real RedisStore: the estimate reserved and the actual cost settled exactly, headers and
 * `extensions.cost`, a fan-out refused before any resolver ran (403), a query that does not fit now
 * refused with a wait (429). The stores' clock stands still, so the buckets show exactly what was charged.
 */
import { createLimiter, MemoryStore, RedisStore, type Store } from '@tollgate/core';
import { mercuriusCostLimit } from '@tollgate/graphql';
import Fastify from 'fastify';
import type { Redis } from 'ioredis';
import mercurius from 'mercurius';
import { parseList } from 'structured-headers';
import { afterAll, describe, expect, it } from 'vitest';
import { connectRedis, uniquePrefix } from '../harness/clients.js';
import {
  countingSchema,
  type GraphQLAnswer,
  post,
  type ResolverCalls,
  SERVER_KINDS,
  startServer,
} from './graphql-servers.js';

const NOW_MS = 1_767_225_600_000;
const clock = () => NOW_MS;
const redis: Redis = await connectRedis();
afterAll(() => redis.disconnect());

const STORES: { name: string; create(): Store }[] = [
  { name: 'MemoryStore', create: () => new MemoryStore({ clock }) },
  {
    name: 'RedisStore',
    create: () => new RedisStore({ client: redis, prefix: uniquePrefix('graphql'), clock }),
  },
];

/** 100 points a minute per user. */
const BUDGET = { limit: 100, window: '1m' } as const;

/** 10 users of 5 posts asked: 1 + 10 × (1 + 5) = 61 estimated; 3 users of 2 posts came back: 1 + 3 × 3 = 10. */
const SMALLER_THAN_ASKED = '{ users(first: 10) { id posts(first: 5) { id } } }';
/** A list of 100 × a list of 100: 1 + 100 × (1 + 100) = 10,101, more than the budget can ever hold. */
const FAN_OUT = '{ users(first: 100) { id posts(first: 100) { id title } } }';
/** Unsized friends, estimated at 10 each, came back 12: 1 + 2 × (1 + 10) = 23 estimated, 1 + 2 × 13 = 27 actual. */
const LARGER_THAN_ASKED = 'query ($n: Int!) { users(first: $n) { friends { id } } }';

function errorOf(answer: GraphQLAnswer) {
  expect(answer.body.errors).toHaveLength(1);
  return answer.body.errors?.[0] as { message: string; extensions: Record<string, unknown> };
}

describe.each(STORES)('the cost limit on $name', ({ create }) => {
  describe.each(SERVER_KINDS)('in %s', (kind) => {
    async function running(dryRun = false) {
      const store = create();
      const calls: ResolverCalls = { users: 0, posts: 0 };
      const server = await startServer(kind, countingSchema(calls), { ...BUDGET, store, dryRun });
      // No deny cache: a peek at a cost above what is left would answer the next peeks from it.
      const budget = createLimiter({ store, policies: BUDGET, namespace: 'graphql', denyCache: false });
      /** Points left in the user's bucket, owed ones below 0 (one token comes back every 600 ms). */
      const left = async (user: string) => {
        const { retryAfterMs } = await budget.peek(`user:${user}`, { cost: BUDGET.limit });
        return BUDGET.limit - (retryAfterMs as number) / 600;
      };
      return { server, calls, left };
    }

    it('reserves the estimate, settles the actual cost exactly, and reports both in extensions.cost and the headers', async () => {
      const { server, calls, left } = await running();
      try {
        const answer = await post(server.url, 'ada', SMALLER_THAN_ASKED);
        expect(answer.status).toBe(200);
        expect(answer.body.data).toEqual({
          users: [0, 1, 2].map((i) => ({ id: String(i), posts: [{ id: `${i}.0` }, { id: `${i}.1` }] })),
        });
        expect(answer.body.extensions?.cost).toEqual({
          requested: 61,
          actual: 10,
          throttleStatus: { maximumAvailable: 100, currentlyAvailable: 90, restoreRate: 100 / 60 },
        });
        expect(answer.body.extensions).not.toHaveProperty('http'); // Yoga reads it and removes it
        // The headers were written as the estimate was reserved: 100 - 61.
        const [member] = parseList(answer.headers.get('ratelimit') ?? '');
        expect(member?.[1].get('r')).toBe(39);
        expect(answer.headers.get('ratelimit-policy')).toBe('"100-per-1m";q=100;w=60');
        expect(calls.users).toBe(1);
        expect(await left('ada')).toBe(90); // charged the actual cost, not the estimate

        // An actual cost above the estimate is charged in full.
        const larger = await post(server.url, 'ada', LARGER_THAN_ASKED, { n: 2 });
        expect(larger.body.extensions?.cost).toMatchObject({ requested: 23, actual: 27 });
        expect(await left('ada')).toBe(90 - 27);
        expect(await left('grace')).toBe(100); // another key's budget
      } finally {
        await server.close();
      }
    });

    it('refuses a fan-out (a list of 100 × a list of 100) before any resolver runs, charging nothing: 403', async () => {
      const { server, calls, left } = await running();
      try {
        const answer = await post(server.url, 'ada', FAN_OUT);
        expect(answer.status).toBe(403);
        expect(answer.body.data ?? null).toBeNull();
        const error = errorOf(answer);
        expect(error.extensions).toMatchObject({
          code: 'TOLLGATE_COST_EXCEEDS_CAPACITY',
          cost: 10_101,
          problem: { status: 403, 'violated-policies': ['100-per-1m'] },
        });
        expect(error.extensions.retryAfterMs).toBeUndefined();
        expect(error.extensions).not.toHaveProperty('http');
        expect(answer.body.extensions ?? {}).not.toHaveProperty('http');
        expect(answer.headers.get('retry-after')).toBeNull(); // no wait will do
        expect(calls).toEqual({ users: 0, posts: 0 });
        expect(await left('ada')).toBe(100);
      } finally {
        await server.close();
      }
    });

    it('costs the operation the request names, not the cheapest of its document', async () => {
      const { server, calls } = await running();
      try {
        const document = `query Cheap { users(first: 1) { id } } ${FAN_OUT.replace('{', 'query FanOut {')}`;
        const answer = await post(server.url, 'ada', document, undefined, 'FanOut');
        expect(answer.status).toBe(403);
        expect(errorOf(answer).extensions.cost).toBe(10_101);
        expect(calls.users).toBe(0);
        expect((await post(server.url, 'ada', document, undefined, 'Cheap')).status).toBe(200);
      } finally {
        await server.close();
      }
    });

    it('refuses what does not fit now with a wait (429, Retry-After), before any resolver runs', async () => {
      const { server, calls, left } = await running();
      try {
        await post(server.url, 'ada', SMALLER_THAN_ASKED); // 90 left
        // 1 + 91 × 1 = 92 estimated, 90 left: 2 points short, 1.2 s at 100 a minute.
        const answer = await post(server.url, 'ada', '{ users(first: 91) { id } }');
        expect(answer.status).toBe(429);
        const error = errorOf(answer);
        expect(error.extensions).toMatchObject({
          code: 'TOLLGATE_RATE_LIMITED',
          cost: 92,
          retryAfterMs: 1200,
          problem: { status: 429, 'violated-policies': ['100-per-1m'] },
        });
        expect(answer.headers.get('retry-after')).toBe('2');
        expect(calls.users).toBe(1); // the first query's only
        expect(await left('ada')).toBe(90);
        expect(answer.body.extensions?.cost).toEqual({
          requested: 92,
          throttleStatus: { maximumAvailable: 100, currentlyAvailable: 90, restoreRate: 100 / 60 },
        });
      } finally {
        await server.close();
      }
    });

    it('in dry run, lets a refused operation run uncharged, reporting its cost', async () => {
      const { server, calls, left } = await running(true);
      try {
        const answer = await post(server.url, 'ada', FAN_OUT);
        expect(answer.status).toBe(200);
        expect(answer.body.errors).toBeUndefined();
        expect(answer.body.extensions?.cost).toEqual({
          requested: 10_101,
          actual: 1 + 3 * (1 + 2),
          throttleStatus: { maximumAvailable: 100, currentlyAvailable: 100, restoreRate: 100 / 60 },
        });
        expect(calls.users).toBe(1);
        expect(await left('ada')).toBe(100); // a would-be refusal is charged nothing
        // What fits is charged as without dry run.
        await post(server.url, 'ada', SMALLER_THAN_ASKED);
        expect(await left('ada')).toBe(90);
      } finally {
        await server.close();
      }
    });
  });
});

describe('Mercurius with batched queries', () => {
  it('costs each operation of a batch by its own name, refusing the fan-out alone', async () => {
    const calls: ResolverCalls = { users: 0, posts: 0 };
    const app = Fastify();
    await app.register(mercurius, { schema: countingSchema(calls), allowBatchedQueries: true });
    mercuriusCostLimit(app, { limit: 100, window: '1m', key: () => 'user:ada' });
    try {
      const document = `query Cheap { users(first: 1) { id } } ${FAN_OUT.replace('{', 'query FanOut {')}`;
      const response = await app.inject({
        method: 'POST',
        url: '/graphql',
        payload: [
          { query: document, operationName: 'Cheap' },
          { query: document, operationName: 'FanOut' },
        ],
      });
      const [cheap, fanOut] = response.json() as GraphQLAnswer['body'][];
      expect(cheap?.extensions?.cost).toMatchObject({ requested: 2, actual: 2 });
      expect(fanOut?.errors?.[0]?.extensions?.code).toBe('TOLLGATE_COST_EXCEEDS_CAPACITY');
      expect(fanOut?.extensions?.cost).toEqual({
        requested: 10_101,
        throttleStatus: { maximumAvailable: 100, currentlyAvailable: 98, restoreRate: 100 / 60 },
      });
      expect(calls).toEqual({ users: 1, posts: 0 });
    } finally {
      await app.close();
    }
  });
});
