/** The estimate: weights, list sizes from arguments and directives, fragments, aliases, variables, skip and include. */
import { GraphQLID, GraphQLInt, GraphQLList, GraphQLObjectType, GraphQLSchema, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { type CostOptions, estimateCost } from '../../src/index.js';
import { schema } from '../schema.js';

const estimate = (query: string, variables?: Record<string, unknown>, options?: CostOptions) =>
  estimateCost({ schema, document: parse(query), variables }, options);

describe('estimateCost', () => {
  it('charges 1 per object and 0 per scalar, a list multiplied by its first/last/limit, plus the base cost', () => {
    expect(estimate('{ users(first: 100) { id name } }')).toBe(1 + 100);
    // A list of 100 users, each with a list of 100 posts of weight 2 (the type's @cost).
    expect(estimate('{ users(first: 100) { posts(first: 100) { title } } }')).toBe(1 + 100 * (1 + 100 * 2));
    expect(estimate('{ users(first: 3, last: 8) { id } }')).toBe(1 + 8); // the largest slicing argument
    expect(estimate('{ user(id: 1) { name } }')).toBe(1 + 1);
    expect(estimate('{ expensive }')).toBe(1 + 7); // a field's @cost
    expect(estimate('{ __typename }')).toBe(1);
  });

  it('gives an unsized list the default list size, 10 unless configured, and lists of lists one per level', () => {
    expect(estimate('{ users { id } }')).toBe(1 + 10);
    expect(estimate('{ users { id } }', undefined, { defaultListSize: 50 })).toBe(1 + 50);
    expect(estimate('{ tags }')).toBe(1); // scalars cost nothing
    expect(estimate('{ tags }', undefined, { scalarWeight: 1 })).toBe(1 + 10);
    expect(estimate('{ grid }', undefined, { scalarWeight: 1 })).toBe(1 + 10 * 10);
  });

  it('follows @listSize: assumedSize, slicingArguments (with their schema defaults) and sizedFields', () => {
    expect(estimate('{ search(term: "a") { ... on User { id } } }')).toBe(1 + 5);
    expect(estimate('{ feed { id } }')).toBe(1 + 20 * 2);
    expect(estimate('{ feed(count: 3) { id } }')).toBe(1 + 3 * 2);
    expect(estimate('{ page(size: 4) { total items { id } } }')).toBe(1 + 1 + 4 * 2);
  });

  it('sizes the edges and nodes of a connection by its first', () => {
    const query =
      '{ usersConnection(first: 4) { edges { node { id } } nodes { id } pageInfo { hasNextPage } } }';
    // The connection, 4 edges of a node each, 4 nodes, the page info.
    expect(estimate(query)).toBe(1 + 1 + 4 * (1 + 1) + 4 + 1);
  });

  it('counts aliases apart, merges a key selected twice, and expands fragments and inline fragments', () => {
    expect(estimate('{ a: users(first: 2) { id } b: users(first: 3) { id } }')).toBe(1 + 2 + 3);
    expect(estimate('{ users(first: 2) { id } users(first: 2) { name } }')).toBe(1 + 2);
    const fragments = `{ users(first: 2) { ...Posts ... on User { friends { id } } } }
      fragment Posts on User { posts(first: 3) { id } }`;
    expect(estimate(fragments)).toBe(1 + 2 * (1 + 3 * 2 + 10));
  });

  it('reads list sizes from variables, their defaults, and applies @skip and @include', () => {
    const query =
      'query ($n: Int = 4, $withPosts: Boolean!) { users(first: $n) { posts(first: 5) @include(if: $withPosts) { id } } }';
    expect(estimate(query, { n: 7, withPosts: false })).toBe(1 + 7);
    expect(estimate(query, { withPosts: true })).toBe(1 + 4 * (1 + 5 * 2));
    expect(estimate('{ users(first: 3) @skip(if: true) { id } }')).toBe(1);
  });

  it('costs the named operation of a document, and only the base cost when none would run', () => {
    const document = 'query Small { user(id: 1) { id } } query Big { users(first: 50) { id } }';
    expect(estimateCost({ schema, document: parse(document), operationName: 'Big' })).toBe(51);
    expect(estimateCost({ schema, document: parse(document) })).toBe(1); // ambiguous: execution refuses it
    expect(estimate('query ($n: Int!) { users(first: $n) { id } }', {})).toBe(1); // a required variable missing
  });

  it('charges introspection one object per entry point, whatever it selects', () => {
    expect(estimate('{ __schema { types { name fields { name type { name } } } } }')).toBe(1 + 1);
  });

  it('caps a runaway estimate at the largest exact number, so that no budget holds it', () => {
    const huge =
      '{ users(first: 1000000000) { posts(first: 1000000000) { id } friends { friends { id } } } }';
    expect(estimate(huge)).toBeGreaterThan(1e18 > Number.MAX_SAFE_INTEGER ? 1e15 : 0);
    expect(Number.isSafeInteger(estimate(huge))).toBe(true);
  });
});

describe('a schema built in code', () => {
  it('takes weights and list sizes from extensions, as the directives give them in SDL', () => {
    const Item = new GraphQLObjectType({
      name: 'Item',
      extensions: { cost: { weight: 3 } },
      fields: { id: { type: GraphQLID } },
    });
    const codeFirst = new GraphQLSchema({
      query: new GraphQLObjectType({
        name: 'Query',
        fields: {
          items: {
            type: new GraphQLList(Item),
            args: { take: { type: GraphQLInt } },
            extensions: { listSize: { slicingArguments: ['take'], assumedSize: 4 } },
          },
          slow: { type: GraphQLInt, extensions: { cost: { weight: 9 } } },
        },
      }),
    });
    const cost = (query: string) => estimateCost({ schema: codeFirst, document: parse(query) });
    expect(cost('{ items(take: 6) { id } }')).toBe(1 + 6 * 3);
    expect(cost('{ items { id } slow }')).toBe(1 + 4 * 3 + 9);
  });
});

describe('a document built to make the estimate slow', () => {
  it('estimates fragments that double at every level in time linear in the document, not in its expansion', () => {
    // F0 selects F1 twice under two keys, F1 selects F2 twice, …: 2^40 paths through 80 fields.
    const levels = 40;
    const fragments = Array.from(
      { length: levels },
      (_, i) => `fragment F${i} on User { a: friends { ...F${i + 1} } b: friends { ...F${i + 1} } }`,
    );
    const query = `{ user(id: 1) { ...F0 } } ${fragments.join(' ')} fragment F${levels} on User { id }`;
    const startedMs = performance.now();
    const cost = estimate(query);
    expect(performance.now() - startedMs).toBeLessThan(500);
    expect(cost).toBe(Number.MAX_SAFE_INTEGER); // 20^40 objects: more than any budget
  });
});
