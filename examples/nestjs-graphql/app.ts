/** The NestJS GraphQL and WebSocket app: which resolvers and messages are limited, by whom, and how hard. */
import 'reflect-metadata';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { type INestApplication, Module } from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { GraphQLModule, Mutation, Query, Resolver, Subscription } from '@nestjs/graphql';
import { WsAdapter } from '@nestjs/platform-ws';
import { SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import {
  byIp,
  byUser,
  firstOf,
  type NestHttpRequest,
  RateLimit,
  SkipRateLimit,
  type Store,
  TollgateGuard,
  TollgateModule,
} from '@tollgate/nestjs';

const BOOKS = ['Dune', 'Emma', 'Middlemarch', 'Ulysses'];

/** The signed-in user, as an authentication guard would set it; here, the `x-user` header. */
const userOf = (req: NestHttpRequest) => req.headers['x-user'] as string | undefined;

@Resolver()
class BooksResolver {
  // (a) A resolver without a @RateLimit of its own: the module's limit, 30 operations a minute per IP.
  @Query(() => [String])
  books(): string[] {
    return BOOKS;
  }

  // (b) Recommendations are expensive: 5 a minute per IP, a budget of their own. Nullable, so that a
  // refused field leaves the other fields of the operation their data.
  @RateLimit({ name: 'recommendations', limit: 5, window: '1m' })
  @Query(() => [String], { nullable: true })
  recommendations(): string[] {
    return BOOKS.slice(0, 2);
  }

  // (c) Reviews: 2 a minute per signed-in user (per IP for the others).
  @RateLimit({ name: 'reviews', limit: 2, window: '1m', key: firstOf(byUser(userOf), byIp()) })
  @Mutation(() => Boolean)
  addReview(): boolean {
    return true;
  }

  // (d) Subscriptions are charged when they start: 3 a minute per IP.
  @RateLimit({ name: 'subscriptions', limit: 3, window: '1m' })
  @Subscription(() => String, { resolve: (payload: { bookAdded: string }) => payload.bookAdded })
  bookAdded() {
    return (async function* bookAdded() {
      for (const book of BOOKS) yield { bookAdded: book };
    })();
  }

  // (e) Not limited: health checks must not use up anyone's allowance.
  @SkipRateLimit()
  @Query(() => String)
  health(): string {
    return 'ok';
  }
}

@WebSocketGateway({ path: '/chat' })
class ChatGateway {
  // (f) Chat over WebSocket: 5 messages every 10 seconds per client address; the 6th is answered with
  // an `exception` event carrying the problem details, and the connection stays open.
  @RateLimit({ name: 'chat', limit: 5, window: '10s' })
  @SubscribeMessage('chat')
  chat() {
    return { event: 'chat', data: 'delivered' };
  }
}

/**
 * Builds the app on Express: Apollo serves GraphQL on /graphql (subscriptions over graphql-ws on the same
 * path), a gateway serves /chat. One global TollgateGuard limits both; every limiter gets the module's
 * `store` and its own `name`.
 *
 * @example
 * const app = await createApp(new MemoryStore());
 * await app.listen(3008);
 */
export async function createApp(store: Store): Promise<INestApplication> {
  @Module({
    imports: [
      GraphQLModule.forRoot<ApolloDriverConfig>({
        driver: ApolloDriver,
        autoSchemaFile: true,
        subscriptions: { 'graphql-ws': true },
      }),
      TollgateModule.forRoot({ name: 'site', limit: 30, window: '1m', store }),
    ],
    providers: [BooksResolver, ChatGateway, { provide: APP_GUARD, useClass: TollgateGuard }],
  })
  class AppModule {}

  const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
  app.useWebSocketAdapter(new WsAdapter(app));
  return app;
}
