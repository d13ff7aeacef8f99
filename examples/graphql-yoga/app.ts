/** The GraphQL Yoga app: a product catalog whose queries are charged what they cost. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Store } from '@tollgate/core';
import { costDirectives, useCostLimit } from '@tollgate/graphql';
import { createSchema, createYoga, type YogaInitialContext, type YogaServerInstance } from 'graphql-yoga';

/** What Yoga's context holds on Node.js, besides the Fetch `request`: the Node request and response. */
export interface NodeContext {
  req: IncomingMessage;
  res: ServerResponse;
}

/** The API keys this demo issued; any other key is charged to the client IP. */
const ISSUED_API_KEYS = new Set(['demo-key-1', 'demo-key-2']);

/**
 * `products(first:)` and `reviews(first:)` are sized by `first` (the default list arguments);
 * `search` by `@listSize(assumedSize:)`, since no argument bounds it; `recommendations` runs a model, so
 * each one costs 5 (`@cost`).
 */
const typeDefs = /* GraphQL */ `
  ${costDirectives}
  type Query {
    products(first: Int = 10): [Product!]!
    search(term: String!): [Product!]! @listSize(assumedSize: 20)
  }
  type Product {
    id: ID!
    name: String!
    reviews(first: Int = 5): [Review!]!
    recommendations: [Product!]! @cost(weight: 5) @listSize(assumedSize: 3)
  }
  type Review {
    stars: Int!
    text: String
  }
`;

interface Product {
  id: string;
  name: string;
}

/** 12 products in stock, each with 2 reviews: lists come back shorter than asked, and are charged so. */
const PRODUCTS: Product[] = Array.from({ length: 12 }, (_, i) => ({
  id: String(i + 1),
  name: `Product ${i + 1}`,
}));

const resolvers = {
  Query: {
    products: (_: unknown, { first }: { first: number }) => PRODUCTS.slice(0, first),
    search: (_: unknown, { term }: { term: string }) =>
      PRODUCTS.filter((product) => product.name.toLowerCase().includes(term.toLowerCase())),
  },
  Product: {
    reviews: (_: Product, { first }: { first: number }) =>
      [
        { stars: 5, text: 'Does what it says' },
        { stars: 3, text: null },
      ].slice(0, first),
    recommendations: (product: Product) => PRODUCTS.filter((other) => other.id !== product.id).slice(0, 2),
  },
};

/**
 * Builds the Yoga server: 300 cost points a minute per API key (an issued one, in `x-api-key`), else per
 * client IP. Behind a proxy, key by the address it forwards instead of the socket's.
 *
 * @example
 * createServer(createApp(new MemoryStore())).listen(3007);
 */
export function createApp(store: Store): YogaServerInstance<NodeContext, object> {
  return createYoga<NodeContext>({
    schema: createSchema({ typeDefs, resolvers }),
    logging: false,
    plugins: [
      useCostLimit<YogaInitialContext & NodeContext>({
        store,
        limit: 300,
        window: '1m',
        key: ({ request, req }) => {
          const apiKey = request.headers.get('x-api-key');
          return apiKey !== null && ISSUED_API_KEYS.has(apiKey)
            ? `key:${apiKey}`
            : `ip:${req.socket.remoteAddress}`;
        },
      }),
    ],
  });
}
