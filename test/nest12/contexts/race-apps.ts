/**
 * The apps the exactness test races on, in the test's process and in a worker's: one per Nest context the
 * guard limits (GraphQL on each platform and driver, a WebSocket gateway, a TCP microservice), each on one
 * Redis under a prefix of its own, each with one handler that takes 100 an hour from everyone together.
 */
import 'reflect-metadata';
import type { AddressInfo, Server } from 'node:net';
import { Controller } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Query, Resolver } from '@nestjs/graphql';
import { MessagePattern, Transport } from '@nestjs/microservices';
import { WsAdapter } from '@nestjs/platform-ws';
import { Test } from '@nestjs/testing';
import { SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { RedisStore } from '@tollgate/core';
import { RateLimit, TollgateGuard, TollgateModule } from '@tollgate/nestjs';
import { Redis } from 'ioredis';
import { graphqlSetups, startGraphQLApp } from './graphql-apps.js';

/** How many operations the race's handler admits, from all processes together. */
export const RACE_LIMIT = 100;

/** The one limit of every race app: a single key, so that every process draws on one budget. */
const RACE = {
  name: 'race',
  limit: RACE_LIMIT,
  window: '1h',
  key: () => 'everyone',
  onStoreError: 'deny',
} as const;

@Resolver()
class RaceResolver {
  @RateLimit(RACE)
  @Query(() => String, { nullable: true })
  race(): string {
    return 'won';
  }
}

@WebSocketGateway({ path: '/race' })
class RaceGateway {
  @RateLimit(RACE)
  @SubscribeMessage('race')
  race() {
    return { event: 'race', data: 'won' };
  }
}

@Controller()
class RaceController {
  @RateLimit(RACE)
  @MessagePattern('race')
  race(): string {
    return 'won';
  }
}

/** The contexts raced: the GraphQL setups by name, then the gateway and the microservice. */
export const RACE_CONTEXTS: readonly string[] = [
  ...graphqlSetups.map((setup) => setup.name),
  'WebSocket gateway',
  'TCP microservice',
];

/**
 * Where each context's app listens: `http://…` for GraphQL (`/graphql` on it), `ws://…/race` for the
 * gateway, `tcp://host:port` for the microservice.
 */
export type RaceAddresses = Readonly<Record<string, string>>;

/** The race apps of one process. */
export interface RunningRaceApps {
  readonly addresses: RaceAddresses;
  close(): Promise<void>;
}

/** Starts every race app on the Redis at `redisUrl`, each context's keys under `prefix` and its name. */
export async function startRaceApps(redisUrl: string, prefix: string): Promise<RunningRaceApps> {
  const redis = new Redis(redisUrl, {
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
  });
  const tollgate = (context: string) =>
    TollgateModule.forRoot({ store: new RedisStore({ client: redis, prefix: `${prefix}${context}:` }) });
  const guard = { provide: APP_GUARD, useClass: TollgateGuard };

  const started = await Promise.all([
    ...graphqlSetups.map(async (setup) => {
      const app = await startGraphQLApp(setup, {
        imports: [tollgate(setup.name)],
        providers: [RaceResolver, guard],
      });
      return { context: setup.name, address: app.url, close: app.close };
    }),
    (async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [tollgate('gateway')],
        providers: [RaceGateway, guard],
      }).compile();
      const app = moduleRef.createNestApplication({ logger: false });
      app.useWebSocketAdapter(new WsAdapter(app));
      await app.listen(0, '127.0.0.1');
      const address = `${(await app.getUrl()).replace('[::1]', '127.0.0.1').replace('http', 'ws')}/race`;
      return { context: 'WebSocket gateway', address, close: () => app.close() };
    })(),
    (async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [tollgate('microservice')],
        controllers: [RaceController],
        providers: [guard],
      }).compile();
      const service = moduleRef.createNestMicroservice({
        transport: Transport.TCP,
        options: { host: '127.0.0.1', port: 0 },
        logger: false,
      });
      await service.listen();
      const { port } = service.unwrap<Server>().address() as AddressInfo;
      return {
        context: 'TCP microservice',
        address: `tcp://127.0.0.1:${port}`,
        close: () => service.close(),
      };
    })(),
  ]);
  return {
    addresses: Object.fromEntries(started.map(({ context, address }) => [context, address])),
    async close() {
      await Promise.all(started.map((app) => app.close()));
      redis.disconnect();
    },
  };
}
