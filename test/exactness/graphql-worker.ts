/**
 * One of several processes serving GraphQL with the cost limit on one Redis: starts a GraphQL Yoga, an
 * Apollo Server and a Mercurius server, each with its own prefix (`prefix` and the kind), prints
 * `ready` and their URLs by kind as JSON, and closes them when stdin ends.
 * argv: redisUrl prefix nowMs limit
 * - nowMs: the store's clock, standing still (the same instant in every process): no budget refills
 *   during the race, so what the bucket holds afterwards is what was charged.
 * - the budget is `limit` points a minute per user, in the limiter `graphql`
 */
import { RedisStore } from '@tollgate/core';
import { Redis } from 'ioredis';
import { countingSchema, SERVER_KINDS, startServer } from '../graphql/graphql-servers.js';

const [redisUrl = '', prefix = '', nowMs = '0', limit = '0'] = process.argv.slice(2);

const redis = new Redis(redisUrl, {
  enableAutoPipelining: true,
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
});
await new Promise((resolve) => redis.once('ready', resolve));
const servers = await Promise.all(
  SERVER_KINDS.map((kind) =>
    startServer(kind, countingSchema({ users: 0, posts: 0 }), {
      limit: Number(limit),
      window: '1m',
      store: new RedisStore({ client: redis, prefix: `${prefix}${kind}:`, clock: () => Number(nowMs) }),
      onStoreError: 'deny', // a store error must fail the race, not be decided by the insurance limiter
    }),
  ),
);
const urls = Object.fromEntries(SERVER_KINDS.map((kind, i) => [kind, servers[i]?.url]));
process.stdout.write(`ready ${JSON.stringify(urls)}\n`);
process.stdin.resume();
await new Promise((resolve) => process.stdin.once('end', resolve));
await Promise.all(servers.map((server) => server.close()));
redis.disconnect();
process.exit(0);
