/**
 * What a fragment of the GraphQL docs may use without declaring it (`<!-- snippet: fragment graphql -->`):
 * `@tollgate/graphql`, the servers' own functions, and the app's own things the docs take as given.
 */
import type { RedisStore } from '@tollgate/graphql';
import type { GraphQLSchema } from 'graphql';

export { ApolloServer } from '@apollo/server';
export { startStandaloneServer } from '@apollo/server/standalone';
export {
  apolloCostLimit,
  CostLimitError,
  costDirectives,
  estimateCost,
  MemoryStore,
  mercuriusCostLimit,
  RedisStore,
  TollgateError,
  useCostLimit,
} from '@tollgate/graphql';
export { default as Fastify } from 'fastify';
export { parse } from 'graphql';
export { createSchema, createYoga, type YogaInitialContext } from 'graphql-yoga';
export { default as mercurius } from 'mercurius';

/** The store every limit shares. */
export declare const store: RedisStore;
/** The app's schema, its type definitions (SDL) and resolvers. */
export declare const schema: GraphQLSchema;
export declare const typeDefs: string;
export declare const resolvers: Record<string, Record<string, (...args: never[]) => unknown>>;
/** The signed-in user an authentication layer puts on the request, if any. */
export declare function userOf(request: Request): { id: string } | undefined;
/** The user a bearer token belongs to, verified; `undefined` for none or a bad one. */
export declare function authenticate(authorization: string | undefined): Promise<{ id: string } | undefined>;
