/**
 * Real Nest GraphQL apps for the guard's GraphQL tests: Apollo and Mercurius, on Express and on Fastify,
 * listening on a loopback port, asked over HTTP with `fetch` and over WebSocket with graphql-ws.
 */
import type { ApolloDriverConfig } from '@nestjs/apollo';
import { ApolloDriver } from '@nestjs/apollo';
import type { ModuleMetadata } from '@nestjs/common';
import type { AbstractHttpAdapter } from '@nestjs/core';
import { GraphQLModule } from '@nestjs/graphql';
import { MercuriusDriver, type MercuriusDriverConfig } from '@nestjs/mercurius';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

/** A GraphQL setup: a platform and a driver. */
export interface GraphQLSetup {
  readonly name: string;
  readonly platform: 'Express' | 'Fastify';
  readonly driver: 'Apollo' | 'Mercurius';
  /** Apollo on Fastify: the driver's own context (`{ req }`), without the reply the others are given. */
  readonly withoutReply?: boolean;
}

export const graphqlSetups: readonly GraphQLSetup[] = [
  { name: 'Apollo on Express', platform: 'Express', driver: 'Apollo' },
  { name: 'Apollo on Fastify', platform: 'Fastify', driver: 'Apollo' },
  { name: 'Mercurius on Fastify', platform: 'Fastify', driver: 'Mercurius' },
];

/** One GraphQL error as the servers send it. */
export interface GraphQLErrorBody {
  readonly message: string;
  readonly path?: readonly (string | number)[];
  readonly extensions?: Record<string, unknown>;
}

/** An HTTP answer to a GraphQL operation. */
export interface GraphQLAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly data: Record<string, unknown> | null | undefined;
  readonly errors: readonly GraphQLErrorBody[] | undefined;
}

/** A GraphQL app listening on 127.0.0.1. */
export interface RunningGraphQLApp {
  readonly url: string;
  /** Posts `query` to `/graphql`. */
  query(query: string, headers?: Record<string, string>): Promise<GraphQLAnswer>;
  /** Starts `query` as a subscription over WebSocket; resolves with its first result, or its errors. */
  subscribe(query: string): Promise<{ data?: unknown; errors?: readonly GraphQLErrorBody[] }>;
  close(): Promise<void>;
}

function adapterOf(setup: GraphQLSetup): AbstractHttpAdapter {
  return setup.platform === 'Express' ? new ExpressAdapter() : new FastifyAdapter();
}

/**
 * The GraphQL module of `setup`, code first, subscriptions over graphql-ws. Apollo on Fastify is given a
 * context that holds the reply, so the rate-limit headers reach the HTTP response.
 */
export function graphqlModule(setup: GraphQLSetup) {
  if (setup.driver === 'Mercurius') {
    return GraphQLModule.forRoot<MercuriusDriverConfig>({
      driver: MercuriusDriver,
      autoSchemaFile: true,
      subscription: true,
    });
  }
  return GraphQLModule.forRoot<ApolloDriverConfig>({
    driver: ApolloDriver,
    autoSchemaFile: true,
    graphiql: false,
    subscriptions: { 'graphql-ws': true },
    ...(setup.platform === 'Fastify' && !setup.withoutReply
      ? { context: (req: unknown, reply: unknown) => ({ req, reply }) }
      : {}),
  });
}

/** Compiles `metadata` (with the GraphQL module of `setup`) into an app and listens on a free port. */
export async function startGraphQLApp(
  setup: GraphQLSetup,
  metadata: ModuleMetadata,
): Promise<RunningGraphQLApp> {
  const moduleRef = await Test.createTestingModule({
    ...metadata,
    imports: [graphqlModule(setup), ...(metadata.imports ?? [])],
  }).compile();
  const app = moduleRef.createNestApplication(adapterOf(setup), { logger: false });
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  return {
    url,
    async query(query, headers = {}) {
      const response = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query }),
      });
      const body = (await response.json()) as Pick<GraphQLAnswer, 'data' | 'errors'>;
      return {
        status: response.status,
        headers: Object.fromEntries(response.headers),
        data: body.data,
        errors: body.errors,
      };
    },
    subscribe: (query) => firstResult(url.replace('http', 'ws'), query),
    close: () => app.close(),
  };
}

/** Opens a graphql-ws connection, subscribes, and resolves with the first result or the errors. */
async function firstResult(
  wsUrl: string,
  query: string,
): Promise<{ data?: unknown; errors?: readonly GraphQLErrorBody[] }> {
  const client = createClient({ url: `${wsUrl}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
  try {
    return await new Promise((resolve, reject) => {
      const stop = client.subscribe(
        { query },
        {
          next: (result) => {
            stop();
            resolve(result as { data?: unknown; errors?: readonly GraphQLErrorBody[] });
          },
          error: (error) =>
            Array.isArray(error)
              ? resolve({ errors: error as GraphQLErrorBody[] })
              : reject(error instanceof Error ? error : new Error(JSON.stringify(error))),
          complete: () => resolve({}),
        },
      );
    });
  } finally {
    await client.dispose();
  }
}
