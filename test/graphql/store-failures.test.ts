/**
 * The cost limit when Redis fails, in a real server (GraphQL Yoga; the lifecycle is the same in every
 * server): the check follows `onStoreError` (the insurance limiter decides, the operation runs
 * uncharged, or it is refused with 503), a settle that fails is logged and the answer still sent, and
 * the server never crashes.
 */
import { RedisStore } from '@tollgate/core';
import type { GraphQLField, GraphQLFieldResolver, GraphQLObjectType } from 'graphql';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { FAIL_FAST } from '../harness/clients.js';
import { type RedisProcess, startRedisServer } from '../harness/redis-server.js';
import { countingSchema, post, type RunningServer, startServer } from './graphql-servers.js';

const QUERY = '{ users(first: 10) { id posts(first: 5) { id } } }';

let redis: RedisProcess | undefined;
let client: Redis | undefined;
let server: RunningServer | undefined;

afterEach(async () => {
  await server?.close();
  client?.disconnect();
  await redis?.stop();
  server = client = redis = undefined;
});

/** A Yoga server on its own Redis, and the lines it logged. */
async function serving(
  onStoreError: 'insurance' | 'allow' | 'deny',
  schema = countingSchema({ users: 0, posts: 0 }),
) {
  redis = await startRedisServer();
  client = new Redis(redis.url, FAIL_FAST);
  client.on('error', () => {});
  await new Promise((resolve) => client?.once('ready', resolve));
  const logged: string[] = [];
  const logger = { warn: (line: string) => logged.push(line), error: (line: string) => logged.push(line) };
  const store = new RedisStore({ client, prefix: 'graphql-failures:', logger });
  server = await startServer('yoga', schema, {
    limit: 100,
    window: '1m',
    store,
    onStoreError,
    logger,
  });
  return { url: server.url, logged, redis };
}

describe('the cost limit with Redis down', () => {
  it("'insurance' (the default): the per-process insurance limiter decides, and the operation runs", async () => {
    const { url, redis } = await serving('insurance');
    await redis.kill();
    const answer = await post(url, 'ada', QUERY);
    expect(answer.status).toBe(200);
    expect(answer.body.extensions?.cost).toMatchObject({ requested: 61, actual: 10 });
    expect(answer.headers.get('ratelimit')).toContain('r=39'); // the insurance limiter's bucket
  });

  it("'allow': the operation runs uncharged, without a budget to report", async () => {
    const { url, logged, redis } = await serving('allow');
    await redis.kill();
    const answer = await post(url, 'ada', QUERY);
    expect(answer.status).toBe(200);
    expect(answer.body.extensions?.cost).toEqual({ requested: 61, actual: 10 });
    expect(answer.headers.get('ratelimit')).toBeNull();
    expect(logged.join('\n')).toContain('[TOLLGATE_STORE_ERROR] @tollgate/graphql');
  });

  it("'deny': the operation is refused with 503 and TOLLGATE_STORE_UNAVAILABLE, and nothing runs", async () => {
    const { url, redis } = await serving('deny');
    await redis.kill();
    const answer = await post(url, 'ada', QUERY);
    expect(answer.status).toBe(503);
    expect(answer.body.errors?.[0]?.extensions).toMatchObject({
      code: 'TOLLGATE_STORE_UNAVAILABLE',
      problem: { status: 503 },
    });
    // The server is still up, and answers the next operation the same way.
    expect((await post(url, 'ada', '{ __typename }')).status).toBe(503);
  });

  it('a settle the store fails is logged, and the answer is still sent', async () => {
    const schema = countingSchema({ users: 0, posts: 0 });
    const users = (schema.getQueryType() as GraphQLObjectType).getFields().users as GraphQLField<
      unknown,
      unknown
    >;
    const resolveUsers = users.resolve as GraphQLFieldResolver<unknown, unknown>;
    let killDuringExecution = false;
    users.resolve = async (...args) => {
      // Redis dies while the operation runs: after its reservation, before its settle.
      if (killDuringExecution) await redis?.kill();
      return resolveUsers(...args);
    };
    const { url, logged } = await serving('insurance', schema);
    expect((await post(url, 'ada', QUERY)).status).toBe(200); // the store works
    killDuringExecution = true;
    const answer = await post(url, 'ada', QUERY);
    expect(answer.status).toBe(200);
    expect(answer.body.data).toBeDefined();
    expect(answer.body.extensions?.cost).toMatchObject({ requested: 61, actual: 10 });
    expect(logged.some((line) => line.startsWith('[TOLLGATE_REFUND_FAILED] @tollgate/graphql'))).toBe(true);
  });
});
