import { describe, expect, it } from 'vitest';
import { createLimiter } from '../src/limiter.js';
import { MemoryStore } from '../src/stores/memory/memory-store.js';

describe('createLimiter options', () => {
  it.each([
    [undefined, /createLimiter needs options/],
    [{}, /policies|policy/],
    [{ policies: { limit: 1, window: '1s' }, store: {} }, /store must be a Store/],
    [{ policies: { limit: 1, window: '1s' }, namespace: 'has space' }, /namespace must be/],
  ])('rejects %j at construction', (options, message) => {
    expect(() => createLimiter(options as never)).toThrow(message);
  });

  it('defaults to a per-process memory store', async () => {
    const limiter = createLimiter({ policies: { limit: 1, window: '1h' } });
    expect((await limiter.consume('a')).allowed).toBe(true);
    expect((await limiter.consume('a')).allowed).toBe(false);
  });
});

describe('limiter calls', () => {
  const limiter = createLimiter({ policies: { limit: 5, window: '1s' } });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY, '2'])('rejects cost %s', async (cost) => {
    await expect(limiter.consume('a', { cost: cost as never })).rejects.toThrow(
      /cost must be a positive finite/,
    );
  });

  it.each(['', 42, undefined])('rejects key %j', async (key) => {
    await expect(limiter.consume(key as never)).rejects.toThrow(/non-empty string/);
  });

  it('keeps namespaces apart on one store', async () => {
    const store = new MemoryStore();
    const policies = { limit: 1, window: '1h' } as const;
    const login = createLimiter({ store, policies, namespace: 'login' });
    const search = createLimiter({ store, policies, namespace: 'search' });
    expect((await login.consume('ip')).allowed).toBe(true);
    expect((await search.consume('ip')).allowed).toBe(true);
    expect((await login.consume('ip')).allowed).toBe(false);
  });
});
