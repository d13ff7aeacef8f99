/** The actual cost: counted from the result by the estimate's rules, lists as long as they came back. */
import { execute, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { costModel } from '../../src/cost/cost-model.js';
import { DEFAULT_COST_RULES } from '../../src/cost/rules.js';
import { schema } from '../schema.js';

const model = costModel(DEFAULT_COST_RULES);

const users = (count: number, posts: number) =>
  Array.from({ length: count }, (_, i) => ({
    id: String(i),
    name: i === 0 ? null : `user ${i}`,
    posts: Array.from({ length: posts }, (_, j) => ({ id: `${i}.${j}`, title: 't' })),
    friends: [],
  }));

const rootValue = {
  users: ({ first }: { first?: number }) => users(Math.min(first ?? 10, 3), 2),
  user: ({ id }: { id: string }) => (id === 'missing' ? null : users(1, 4)[0]),
  search: () => [
    { __typename: 'User', id: 'u', posts: [{ id: 'x' }, { id: 'y' }] },
    { __typename: 'Post', id: 'p' },
    { __typename: 'Post', id: 'q' },
  ],
};

async function costs(query: string): Promise<{ estimate: number; actual: number }> {
  const document = parse(query);
  const estimate = model.estimate({ schema, document });
  const result = await execute({ schema, document, rootValue });
  expect(result.errors).toBeUndefined();
  return { estimate: estimate.cost, actual: model.actual(estimate, result.data) };
}

describe('the actual cost', () => {
  it('counts the lists as long as they came back', async () => {
    // Asked for 100 × 100, got 3 users of 2 posts each.
    expect(await costs('{ users(first: 100) { posts(first: 100) { title } } }')).toEqual({
      estimate: 1 + 100 * (1 + 100 * 2),
      actual: 1 + 3 * (1 + 2 * 2),
    });
  });

  it('equals the estimate when every list is as long as asked', async () => {
    expect(await costs('{ users(first: 3) { id posts(first: 2) { id } } }')).toEqual({
      estimate: 1 + 3 * (1 + 2 * 2),
      actual: 1 + 3 * (1 + 2 * 2),
    });
  });

  it('charges nothing for a null, nor below it', async () => {
    expect(await costs('{ user(id: "missing") { posts { id } } }')).toEqual({
      estimate: 1 + 1 + 10 * 2,
      actual: 1,
    });
  });

  it('counts aliases and fragments, and each member of a union by its __typename', async () => {
    const query = `{ a: users(first: 1) { ...P } b: users(first: 2) { id }
      search(term: "x") { __typename ... on Post { id } ... on User { posts { id } } } }
      fragment P on User { posts(first: 9) { id } }`;
    const { actual } = await costs(query);
    // a: 1 user of 2 posts; b: 2 users; search: 3 results at the union's weight, the user's 2 posts at 2.
    expect(actual).toBe(1 + (1 + 2 * 2) + 2 + (3 + 2 * 2));
  });

  it('is the base cost when the result has no data', () => {
    const estimate = model.estimate({ schema, document: parse('{ users { id } }') });
    expect(model.actual(estimate, null)).toBe(1);
    expect(model.actual(estimate, undefined)).toBe(1);
  });
});
