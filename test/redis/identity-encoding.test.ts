/**
 * Identities that only UTF-8 would fold together: lone UTF-16 surrogates (a JSON body can carry
 * `"\ud800"`) all encode to U+FFFD on their way to Redis. Every store keeps them apart, as the memory
 * store, the deny cache and the allowList always did.
 */
import { createLimiter, MemoryStore, RedisStore, type Store } from '@tollgate/core';
import { afterAll, describe, expect, it } from 'vitest';
import { connectCluster, connectRedis, uniquePrefix } from '../harness/clients.js';

const redis = await connectRedis();
const cluster = await connectCluster();
afterAll(() => {
  redis.disconnect();
  cluster.disconnect();
});

const stores: [string, () => Store][] = [
  ['MemoryStore', () => new MemoryStore()],
  ['RedisStore', () => new RedisStore({ client: redis, prefix: uniquePrefix('surrogates') })],
  ['RedisStore on Cluster', () => new RedisStore({ client: cluster, prefix: uniquePrefix('surrogates') })],
];

/** Four different strings; the first three are one string once encoded as UTF-8. */
const SHORT = ['user:\ud800', 'user:\udc00', 'user:\ufffd', 'user:\ud800\udc00', 'user:%uD800'];
const LONG = SHORT.map((identity) => `${identity}${'x'.repeat(200)}`);

describe.each(stores)('%s', (_name, makeStore) => {
  it.each([
    ['short', SHORT],
    ['long (hashed)', LONG],
  ])('gives each %s identity with a lone surrogate a bucket of its own', async (_length, identities) => {
    const limiter = createLimiter({ store: makeStore(), policies: { limit: 1, window: '1h' } });
    const first = await Promise.all(identities.map((identity) => limiter.consume(identity)));
    expect(first.map((decision) => decision.allowed)).toEqual(identities.map(() => true));
    const second = await Promise.all(identities.map((identity) => limiter.consume(identity)));
    expect(second.map((decision) => decision.allowed)).toEqual(identities.map(() => false));
  });
});
