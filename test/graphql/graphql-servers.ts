/**
 * The GraphQL servers the cost limit runs in, listening on real sockets: GraphQL Yoga (the Envelop
 * plugin), Apollo Server (standalone) and Mercurius (on Fastify), one schema for all three whose
 * resolvers count their calls. Used by the suite and by the exactness workers, outside Vitest.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { apolloCostLimit, type CostLimitOptions, mercuriusCostLimit, useCostLimit } from '@tollgate/graphql';
import Fastify from 'fastify';
import { buildSchema, type GraphQLField, type GraphQLObjectType, type GraphQLSchema } from 'graphql';
import { createYoga } from 'graphql-yoga';
import mercurius from 'mercurius';

/** The kinds of server. */
export const SERVER_KINDS = ['yoga', 'apollo', 'mercurius'] as const;
export type ServerKind = (typeof SERVER_KINDS)[number];

/** How many times each resolver ran: a refused operation must leave them at 0. */
export interface ResolverCalls {
  users: number;
  posts: number;
}

/**
 * Users and their posts. `users(first:)` returns at most `available` users, and a user's posts at most
 * 2 (`friends`, unsized, returns 12, beyond the default size of 10): so an estimate and the actual cost
 * differ, both ways.
 */
export function countingSchema(calls: ResolverCalls, available = 3): GraphQLSchema {
  const schema = buildSchema(`
    type Query { users(first: Int!): [User!]! }
    type User { id: ID! posts(first: Int!): [Post!]! friends: [User!]! }
    type Post { id: ID! title: String }
  `);
  const user = (id: string) => ({ id });
  fieldOf(schema.getQueryType(), 'users').resolve = (_root, args) => {
    calls.users++;
    return Array.from({ length: Math.min(args.first as number, available) }, (_, i) => user(String(i)));
  };
  const userType = schema.getType('User') as GraphQLObjectType;
  fieldOf(userType, 'posts').resolve = (parent, args) => {
    calls.posts++;
    return Array.from({ length: Math.min(args.first as number, 2) }, (_, i) => ({
      id: `${(parent as { id: string }).id}.${i}`,
      title: 't',
    }));
  };
  fieldOf(userType, 'friends').resolve = () => Array.from({ length: 12 }, (_, i) => user(`f${i}`));
  return schema;
}

function fieldOf(type: unknown, name: string): GraphQLField<unknown, unknown> {
  return (type as GraphQLObjectType).getFields()[name] as GraphQLField<unknown, unknown>;
}

/** The limit's options but the key, which each server reads from its own context. */
export type LimitOptions = Omit<CostLimitOptions<unknown>, 'key' | 'dryRun'> & { dryRun?: boolean };

/** A server listening on a loopback port. */
export interface RunningServer {
  readonly url: string;
  close(): Promise<void>;
}

/** Starts `kind` with the cost limit, keyed by the `x-user` request header. */
export async function startServer(
  kind: ServerKind,
  schema: GraphQLSchema,
  options: LimitOptions,
): Promise<RunningServer> {
  switch (kind) {
    case 'yoga': {
      const yoga = createYoga({
        schema,
        logging: false,
        plugins: [
          useCostLimit({ ...options, key: ({ request }) => `user:${request.headers.get('x-user')}` }),
        ],
      });
      const server = createServer(yoga);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      return {
        url: `http://127.0.0.1:${port}/graphql`,
        close: () => new Promise((resolve) => server.close(() => resolve())),
      };
    }
    case 'apollo': {
      const server = new ApolloServer<{ user: string }>({
        schema,
        plugins: [apolloCostLimit({ ...options, key: (context) => `user:${context.user}` })],
      });
      const { url } = await startStandaloneServer(server, {
        listen: { port: 0, host: '127.0.0.1' },
        context: async ({ req }) => ({ user: String(req.headers['x-user']) }),
      });
      return { url, close: () => server.stop() };
    }
    case 'mercurius': {
      const app = Fastify();
      await app.register(mercurius, { schema });
      mercuriusCostLimit(app, {
        ...options,
        key: (context) => `user:${context.reply.request.headers['x-user']}`,
      });
      const address = await app.listen({ port: 0, host: '127.0.0.1' });
      return { url: `${address}/graphql`, close: () => app.close() };
    }
  }
}

/** A GraphQL response as the tests read it. */
export interface GraphQLAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: {
    data?: unknown;
    errors?: { message: string; extensions?: Record<string, unknown> }[];
    extensions?: { cost?: { requested: number; actual?: number; throttleStatus?: Record<string, number> } };
  };
}

/** POSTs `query` (its operation `operationName`, if given) as user `user`. */
export async function post(
  url: string,
  user: string,
  query: string,
  variables?: Record<string, unknown>,
  operationName?: string,
): Promise<GraphQLAnswer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-user': user },
    body: JSON.stringify({ query, variables, operationName }),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}
