/**
 * The app the exactness test races on, in the test's process and in a worker's: one GraphQL API (Nest 12,
 * Apollo on Express) on one Redis, whose resolver takes 100 an hour from everyone together.
 */
import 'reflect-metadata';
import { APP_GUARD } from '@nestjs/core';
import { Query, Resolver } from '@nestjs/graphql';
import { RedisStore } from '@tollgate/core';
import { RateLimit, TollgateGuard, TollgateModule } from '@tollgate/nestjs';
import { Redis } from 'ioredis';
import { type RunningGraphQLApp, startGraphQLApp } from './graphql-apps.js';

@Resolver()
class RaceResolver {
  @RateLimit({ name: 'race', limit: 100, window: '1h', key: () => 'everyone', onStoreError: 'deny' })
  @Query(() => String, { nullable: true })
  race(): string {
    return 'won';
  }
}

/** Starts the app on the Redis at `redisUrl`, its keys under `prefix`. */
export async function startRaceApp(redisUrl: string, prefix: string): Promise<RunningGraphQLApp> {
  const redis = new Redis(redisUrl, {
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
  });
  const app = await startGraphQLApp(
    { name: 'Apollo on Express', platform: 'Express', driver: 'Apollo' },
    {
      imports: [TollgateModule.forRoot({ store: new RedisStore({ client: redis, prefix }) })],
      providers: [RaceResolver, { provide: APP_GUARD, useClass: TollgateGuard }],
    },
  );
  return {
    ...app,
    async close() {
      await app.close();
      redis.disconnect();
    },
  };
}
