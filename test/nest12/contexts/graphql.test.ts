/**
 * `TollgateGuard` in GraphQL resolvers, on real Nest apps: Apollo on Express and on Fastify, Mercurius
 * on Fastify, each on MemoryStore and RedisStore. `@RateLimit` on a resolver class and on a resolver,
 * the key from the request under the GraphQL context, the refusal as a GraphQL error whose extensions
 * carry the problem details, the headers on the HTTP response, subscriptions limited per start.
 */
import { APP_GUARD } from '@nestjs/core';
import { Int, Mutation, Query, Resolver, Subscription } from '@nestjs/graphql';
import { MemoryStore, QUOTA_EXCEEDED_TYPE, RedisStore, type Store } from '@tollgate/core';
import {
  type NestHttpRequest,
  RateLimit,
  type RateLimitInfo,
  SkipRateLimit,
  TollgateGuard,
  TollgateModule,
} from '@tollgate/nestjs';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { draft10 } from '../../frameworks/parse-headers.js';
import { connectRedis, uniquePrefix } from '../../harness/clients.js';
import {
  type GraphQLAnswer,
  graphqlSetups,
  type RunningGraphQLApp,
  startGraphQLApp,
} from './graphql-apps.js';

const redis = await connectRedis();
afterAll(() => redis.disconnect());

const stores: [string, () => Store][] = [
  ['MemoryStore', () => new MemoryStore()],
  ['RedisStore', () => new RedisStore({ client: redis, prefix: uniquePrefix('nestjs-graphql') })],
];

/** A resolver class with a limit of its own: 2 a minute per client for its fields together. */
@RateLimit({ name: 'search', limit: 2, window: '1m' })
@Resolver()
class SearchResolver {
  @Query(() => String, { nullable: true })
  search(): string {
    return 'found';
  }

  @Query(() => String, { nullable: true })
  suggest(): string {
    return 'suggested';
  }

  /** A resolver's own limit wins over its class's: 1 an hour, keyed by the x-user header. */
  @RateLimit({
    name: 'export',
    limit: 1,
    window: '1h',
    key: (req: NestHttpRequest) => `user:${String(req.headers['x-user'])}`,
  })
  @Mutation(() => Int)
  exportAll(): number {
    return 42;
  }

  @SkipRateLimit()
  @Query(() => String)
  health(): string {
    return 'ok';
  }
}

/** No limit of its own: the module's app-wide limiter, 3 an hour. */
@Resolver()
class TicksResolver {
  @Query(() => String)
  hello(): string {
    return 'hello';
  }

  /** Each subscription's start is charged: 2 an hour. */
  @RateLimit({ name: 'ticks', limit: 2, window: '1h' })
  @Subscription(() => Int, { resolve: (payload: { ticks: number }) => payload.ticks })
  ticks() {
    return (async function* ticks() {
      yield { ticks: 1 };
    })();
  }
}

/** The `RateLimit` field's members, by policy name, read by two structured-field parsers. */
function rateLimit({ status, headers }: GraphQLAnswer) {
  return draft10({ status, headers, body: '' }, 'ratelimit');
}

/** Reads the call's rate limit where the guard put it: the HTTP request's `rateLimit`. */
@Resolver()
class InfoResolver {
  @Query(() => Int, { nullable: true })
  remaining(
    _root: unknown,
    _args: unknown,
    context: { req: { rateLimit?: RateLimitInfo } },
  ): number | undefined {
    return context.req.rateLimit?.remaining;
  }

  @RateLimit({ name: 'ticks-info', limit: 5, window: '1h' })
  @Subscription(() => Int, { resolve: (payload: { ticks: number }) => payload.ticks })
  ticks() {
    return (async function* ticks() {
      yield { ticks: 1 };
    })();
  }
}

function expectRefusal(error: unknown, field: string, policy: string) {
  expect(error).toMatchObject({
    message: expect.stringMatching(/^Too many requests: retry in \d+ seconds?\.$/),
    path: [field],
    extensions: {
      code: 'TOLLGATE_RATE_LIMITED',
      retryAfter: expect.any(Number),
      retryAfterMs: expect.any(Number),
      type: QUOTA_EXCEEDED_TYPE,
      status: 429,
      'violated-policies': [policy],
    },
  });
}

describe.each(graphqlSetups)('GraphQL: $name', (setup) => {
  describe.each(stores)('on %s', (_name, makeStore) => {
    let app: RunningGraphQLApp;
    beforeEach(async () => {
      app = await startGraphQLApp(setup, {
        imports: [TollgateModule.forRoot({ name: 'site', limit: 3, window: '1h', store: makeStore() })],
        providers: [SearchResolver, TicksResolver, { provide: APP_GUARD, useClass: TollgateGuard }],
      });
    });
    afterEach(() => app.close());

    it("charges a resolver class's fields to its limiter, with headers, and refuses as a GraphQL error", async () => {
      const first = await app.query('{ search }');
      expect(first).toMatchObject({ status: 200, data: { search: 'found' }, errors: undefined });
      expect(rateLimit(first)).toEqual({ '2-per-1m': { r: 1, t: expect.any(Number) } });
      expect((await app.query('{ suggest }')).data).toEqual({ suggest: 'suggested' });

      const refused = await app.query('{ search }');
      expect(refused.status).toBe(200);
      expect(refused.data).toEqual({ search: null });
      expect(refused.errors).toHaveLength(1);
      expectRefusal(refused.errors?.[0], 'search', '2-per-1m');
      const retryAfter = Number(refused.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(0);
      expect(refused.errors?.[0]?.extensions?.retryAfter).toBe(retryAfter);
      const retryAfterMs = refused.errors?.[0]?.extensions?.retryAfterMs as number;
      expect(retryAfterMs).toBeGreaterThan((retryAfter - 1) * 1000);
      expect(retryAfterMs).toBeLessThanOrEqual(retryAfter * 1000);
      expect(rateLimit(refused)['2-per-1m']).toMatchObject({ r: 0 });

      // A skipped field and another class's fields are not this limiter's.
      expect((await app.query('{ health }')).headers.ratelimit).toBeUndefined();
      expect((await app.query('{ hello }')).data).toEqual({ hello: 'hello' });
    });

    it("gives a resolver's own limit, keyed from the request, over its class's", async () => {
      const ann = { 'x-user': 'ann' };
      expect((await app.query('mutation { exportAll }', ann)).data).toEqual({ exportAll: 42 });
      const again = await app.query('mutation { exportAll }', ann);
      expectRefusal(again.errors?.[0], 'exportAll', '1-per-1h');
      expect((await app.query('mutation { exportAll }', { 'x-user': 'bob' })).data).toEqual({
        exportAll: 42,
      });
    });

    it('charges each guarded field of one operation, and lists one limiter once in the headers', async () => {
      const both = await app.query('{ search suggest }');
      expect(both.data).toEqual({ search: 'found', suggest: 'suggested' });
      expect(rateLimit(both)).toEqual({ '2-per-1m': { r: 0, t: expect.any(Number) } });
      // The third field of the budget is refused while the app-wide field answers.
      const mixed = await app.query('{ search hello }');
      expect(mixed.data).toEqual({ search: null, hello: 'hello' });
      expectRefusal(mixed.errors?.[0], 'search', '2-per-1m');
      expect(Object.keys(rateLimit(mixed))).toEqual(['2-per-1m', '3-per-1h']);
    });

    it('limits subscriptions per start, over WebSocket', async () => {
      expect(await app.subscribe('subscription { ticks }')).toEqual({ data: { ticks: 1 } });
      expect(await app.subscribe('subscription { ticks }')).toEqual({ data: { ticks: 1 } });
      const refused = await app.subscribe('subscription { ticks }');
      expectRefusal(refused.errors?.[0], 'ticks', '2-per-1h');
    });
  });
});

describe("GraphQL: Apollo on Fastify, the driver's own context", () => {
  it('limits without headers when the context holds no reply', async () => {
    const setup = {
      name: 'Apollo on Fastify',
      platform: 'Fastify',
      driver: 'Apollo',
      withoutReply: true,
    } as const;
    const app = await startGraphQLApp(setup, {
      imports: [TollgateModule.forRoot({ name: 'site', limit: 3, window: '1h' })],
      providers: [SearchResolver, TicksResolver, { provide: APP_GUARD, useClass: TollgateGuard }],
    });
    try {
      const first = await app.query('{ search }');
      expect(first.data).toEqual({ search: 'found' });
      expect(first.headers.ratelimit).toBeUndefined();
      await app.query('{ search }');
      const refused = await app.query('{ search }');
      expectRefusal(refused.errors?.[0], 'search', '2-per-1m');
      expect(refused.headers['retry-after']).toBeUndefined();
    } finally {
      await app.close();
    }
  });
});

describe('GraphQL: one operation, several checks of one limiter', () => {
  it("is no double count to warn of, and the resolver reads its call's rate limit on the request", async () => {
    const logged: string[] = [];
    const logger = { warn: (line: string) => logged.push(line), error: (line: string) => logged.push(line) };
    const app = await startGraphQLApp(graphqlSetups[0] as (typeof graphqlSetups)[number], {
      imports: [TollgateModule.forRoot({ name: 'site', limit: 10, window: '1h', logger })],
      providers: [SearchResolver, InfoResolver, { provide: APP_GUARD, useClass: TollgateGuard }],
    });
    try {
      const answer = await app.query('{ search suggest remaining }');
      expect(answer.data).toEqual({ search: 'found', suggest: 'suggested', remaining: 9 });
      const again = await app.subscribe('subscription { ticks }');
      expect(again).toEqual({ data: { ticks: 1 } });
      expect(await app.subscribe('subscription { ticks }')).toEqual({ data: { ticks: 1 } });
      expect(logged.filter((line) => line.includes('TOLLGATE_DOUBLE_COUNT'))).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
