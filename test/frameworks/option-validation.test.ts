/** Bad options through the real frameworks: each throws when the limiter is created, naming the adapter. */
import { rateLimit as expressRateLimit } from '@tollgate/express';
import { tollgate } from '@tollgate/fastify';
import { rateLimit as koaRateLimit } from '@tollgate/koa';
import fastify5 from 'fastify';
import fastify4 from 'fastify4';
import { describe, expect, it } from 'vitest';

const NOT_OPTIONS: readonly [string, unknown][] = [
  ['a function', () => ({ limit: 1 })],
  ['an array', [{ limit: 1, window: '1s' }]],
  ['true', true],
  ["'strict'", 'strict'],
  ['null', null],
];

describe.each([
  ['Fastify 5', fastify5],
  ['Fastify 4', fastify4],
])('%s: a route config.rateLimit that is neither options nor false', (_name, fastify) => {
  // A function or an array used to pass silently (the route got a limiter with the plugin's options), and
  // true, 'strict' or null failed with a bare "Cannot use 'in' operator".
  it.each(NOT_OPTIONS)(
    'throws at registration for %s, naming the route and the option',
    async (shown, bad) => {
      for (const global of [true, false]) {
        const app = fastify();
        await app.register(tollgate, { global, limit: 5, window: '1m' });
        const add = () => app.post('/orders/:id', { config: { rateLimit: bad as never } }, async () => 'ok');
        expect(add).toThrow(TypeError);
        expect(add).toThrow(
          `@tollgate/fastify (route POST /orders/:id): config.rateLimit must be options like { limit: 10, window: '1s' }, or false; got ${shown}`,
        );
      }
    },
  );

  it('still takes options and false', async () => {
    const app = fastify();
    await app.register(tollgate, { limit: 5, window: '1m' });
    app.get('/a', { config: { rateLimit: { limit: 1 } } }, async () => 'ok');
    app.get('/b', { config: { rateLimit: false } }, async () => 'ok');
    app.get('/c', { config: { rateLimit: {} } }, async () => 'ok');
    expect((await app.inject('/a')).statusCode).toBe(200);
    expect((await app.inject('/a')).statusCode).toBe(429);
    expect((await app.inject('/b')).headers.ratelimit).toBeUndefined();
    expect((await app.inject('/c')).headers.ratelimit).toBeDefined();
  });

  it("names the route in the errors of the route's own options", async () => {
    const app = fastify();
    await app.register(tollgate, { global: false });
    expect(() =>
      app.get('/x', { config: { rateLimit: { limt: 5, window: '1m' } as never } }, async () => 'ok'),
    ).toThrow(new TypeError("@tollgate/fastify (route GET /x): unknown option 'limt'; did you mean limit?"));
    expect(() =>
      app.get(
        '/y',
        { config: { rateLimit: { limit: 1, window: '1m', hook: 'onSend' as never } } },
        async () => 'ok',
      ),
    ).toThrow(
      new TypeError(
        '@tollgate/fastify (route GET /y): config.rateLimit.hook must be one of onRequest, preValidation, preHandler',
      ),
    );
  });
});

describe.each([
  ['@tollgate/express', (options: object) => expressRateLimit(options as never)],
  ['@tollgate/koa', (options: object) => koaRateLimit(options as never)],
  [
    '@tollgate/fastify',
    async (options: object) => {
      await fastify5().register(tollgate, options as never);
    },
  ],
])('%s: construction-time errors', (adapter, create) => {
  const rejects = async (options: object, message: string | RegExp) => {
    const attempt = async () => create(options);
    await expect(attempt()).rejects.toThrow(TypeError);
    await expect(attempt()).rejects.toThrow(message);
    await expect(attempt()).rejects.toThrow(new RegExp(`^${adapter.replace('/', '\\/')}: `));
  };

  // It used to say "policy.limit must be …", without the adapter.
  it('names the adapter for a bad top-level limit', async () => {
    await rejects(
      { limit: -1, window: '1m' },
      `${adapter}: limit must be a positive whole number, or 0 to refuse every request; got -1`,
    );
  });

  it('rejects a typo of an option, naming the option meant', async () => {
    await rejects({ limit: 5, windwo: '1m' }, `${adapter}: unknown option 'windwo'; did you mean window?`);
  });

  it("rejects the peers' spellings with what to write, or says they are not supported", async () => {
    await rejects({ max: 5, window: '1m' }, `${adapter}: unknown option 'max'; use limit.`);
    await rejects(
      { limit: 5, window: '1m', keyGenerator: () => 'k' },
      "unknown option 'keyGenerator'; use key",
    );
    await rejects(
      { limit: 5, window: '1m', blockDuration: 60 },
      /'blockDuration'; use ban: \{ after, duration \}/,
    );
    await rejects(
      { limit: 5, window: '1m', execEvenly: true },
      /'execEvenly'; use delay: \{ maxWait \} with burst: 1/,
    );
    await rejects({ limit: 5, window: '1m', delayAfter: 5 }, /'delayAfter'; use delay: \{ maxWait \}/);
  });

  it('rejects an unknown warnings code', async () => {
    await rejects(
      { limit: 5, window: '1m', warnings: { TOLLGATE_MISSING_KEYS: false } },
      `${adapter}: warnings has an unknown code 'TOLLGATE_MISSING_KEYS'; did you mean TOLLGATE_MISSING_KEY?`,
    );
  });

  it('rejects a policy with an unknown field, or an algorithm it does not know', async () => {
    await rejects(
      { policies: { limit: 10, window: '1m', algorithim: 'fixed-window' } },
      `${adapter}: policy has an unknown field 'algorithim'; did you mean algorithm?`,
    );
    await rejects(
      { policies: { limit: 10, window: '1m', algorithm: 'leaky-bucket' } },
      `${adapter}: policy.algorithm must be one of 'token-bucket', 'fixed-window', 'sliding-window'; got 'leaky-bucket'`,
    );
  });
});
