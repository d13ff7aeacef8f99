/**
 * The features peers' users reach for, each framework's own way: typed request properties through
 * declaration merging, `resetKey` on the middleware, `requestWasSuccessful` given the native response,
 * Fastify's `fastify.rateLimit()` (the 404 handler, stacked hooks) and per-route `hook`, and the setup
 * warnings that depend on how each framework is set up.
 */
import Router from '@koa/router';
import { MemoryStore } from '@tollgate/core';
import { rateLimit as expressRateLimit } from '@tollgate/express';
import { tollgate } from '@tollgate/fastify';
import { rateLimit as koaRateLimit } from '@tollgate/koa';
import express5 from 'express';
import express4 from 'express4';
import fastify5 from 'fastify';
import fastify4 from 'fastify4';
import Koa3 from 'koa';
import Koa2 from 'koa2';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

/** A logger that keeps what it is given, and the codes of those lines. */
function recorder() {
  const lines: string[] = [];
  const logger = { warn: (line: string) => lines.push(line), error: (line: string) => lines.push(line) };
  const codes = () => lines.map((line) => /^\[(\w+)\]/.exec(line)?.[1]);
  return { logger, lines, codes };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe.each([
  ['Express 5', express5],
  ['Express 4', express4],
])('%s', (_name, express) => {
  it('puts the info on req.rateLimit, typed, and resets a key from an admin route', async () => {
    const app = express();
    const login = expressRateLimit({ limit: 2, window: '15m', store: new MemoryStore() });
    app.post('/login', login, (req, res) => {
      res.json({ remaining: req.rateLimit?.remaining, key: req.rateLimit?.key });
    });
    app.post('/admin/unblock', async (req, res) => {
      await login.resetKey(`ip:${req.get('x-unblock')}`);
      res.sendStatus(204);
    });
    const first = await request(app).post('/login');
    expect(first.body).toEqual({ remaining: 1, key: 'ip:127.0.0.1' });
    await request(app).post('/login');
    expect((await request(app).post('/login')).status).toBe(429);
    await request(app).post('/admin/unblock').set('x-unblock', '127.0.0.1');
    expect((await request(app).post('/login')).body).toEqual({ remaining: 1, key: 'ip:127.0.0.1' });
  });

  it('sets, reads and removes a client’s override through the middleware, shown in its headers', async () => {
    const app = express();
    const login = expressRateLimit({ limit: 1, window: '15m', algorithm: 'fixed-window', overrides: true });
    app.post('/login', login, (_req, res) => void res.sendStatus(204));
    await request(app).post('/login');
    expect((await request(app).post('/login')).status).toBe(429);
    await login.setOverride('ip:127.0.0.1', 3, { ttl: '1h' });
    const raised = await request(app).post('/login');
    expect([raised.status, raised.headers['ratelimit-policy']]).toEqual([204, '"1-per-15m";q=3;w=900']);
    expect((await login.getOverride('ip:127.0.0.1'))?.policies[0]?.limit).toBe(3);
    await login.removeOverride('ip:127.0.0.1');
    expect((await request(app).post('/login')).status).toBe(429);
    const plain = expressRateLimit({ limit: 1, window: '15m' });
    await expect(plain.setOverride('ip:127.0.0.1', 3)).rejects.toThrow(/overrides: true/);
  });

  it('hands requestWasSuccessful the response: here a 404 is no failure', async () => {
    const app = express();
    app.use(
      expressRateLimit({
        limit: 1,
        window: '1h',
        skipSuccessfulRequests: true,
        requestWasSuccessful: (_req, res) => res.statusCode < 500,
      }),
    );
    app.get('/', (req, res) => void res.sendStatus(Number(req.get('x-status'))));
    expect((await request(app).get('/').set('x-status', '404')).status).toBe(404);
    await settle();
    expect((await request(app).get('/').set('x-status', '500')).status).toBe(500);
    await settle();
    expect((await request(app).get('/').set('x-status', '200')).status).toBe(429);
  });

  it('warns TOLLGATE_DOUBLE_COUNT for one limiter mounted app-wide and again on a route', async () => {
    const { logger, codes } = recorder();
    const app = express();
    const limiter = expressRateLimit({ limit: 10, window: '1m', logger });
    app.use(limiter);
    app.get('/', limiter, (req, res) => void res.json({ remaining: req.rateLimit?.remaining }));
    expect((await request(app).get('/')).body).toEqual({ remaining: 8 });
    expect(codes()).toEqual(['TOLLGATE_DOUBLE_COUNT']);
  });

  it('warns TOLLGATE_CREATED_IN_HANDLER for a limiter made per request, which limits nothing', async () => {
    const { logger, codes } = recorder();
    const app = express();
    const limit = express === express5 ? 3 : 4; // each test its own options: the warning is once per options
    app.use((req, res, next) => expressRateLimit({ limit, window: '1m', logger })(req, res, next));
    app.get('/', (_req, res) => void res.send('ok'));
    const statuses = [];
    for (let i = 0; i < limit + 2; i++) statuses.push((await request(app).get('/')).status);
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(codes()).toEqual(['TOLLGATE_CREATED_IN_HANDLER']);
  });

  it("warns TOLLGATE_PERMISSIVE_TRUST_PROXY for 'trust proxy' true only", async () => {
    for (const [trust, expected] of [
      [true, ['TOLLGATE_PERMISSIVE_TRUST_PROXY']],
      ['loopback', []],
      [1, []],
    ] as const) {
      const { logger, codes } = recorder();
      const app = express();
      app.set('trust proxy', trust);
      app.use(expressRateLimit({ limit: 10, window: '1m', logger }));
      app.get('/', (_req, res) => void res.send('ok'));
      await request(app).get('/');
      expect(codes()).toEqual(expected);
    }
  });
});

describe.each([
  ['Koa 3', Koa3],
  ['Koa 2', Koa2],
])('%s', (_name, Koa) => {
  it('puts the info on ctx.state.rateLimit, typed, and resets a key from an admin route', async () => {
    const app = new Koa();
    const router = new Router();
    const login = koaRateLimit({ limit: 2, window: '15m' });
    router.post('/login', login, (ctx) => {
      ctx.body = { remaining: ctx.state.rateLimit?.remaining, key: ctx.state.rateLimit?.key };
    });
    router.post('/admin/unblock', async (ctx) => {
      await login.resetKey(`ip:${ctx.get('x-unblock')}`);
      ctx.status = 204;
    });
    app.use(router.routes());
    const server = app.callback();
    expect((await request(server).post('/login')).body).toEqual({ remaining: 1, key: 'ip:127.0.0.1' });
    await request(server).post('/login');
    expect((await request(server).post('/login')).status).toBe(429);
    await request(server).post('/admin/unblock').set('x-unblock', '127.0.0.1');
    expect((await request(server).post('/login')).body).toEqual({ remaining: 1, key: 'ip:127.0.0.1' });
  });

  it('sets, reads and removes a client’s override through the middleware, shown in its headers', async () => {
    const app = new Koa();
    const router = new Router();
    const login = koaRateLimit({ limit: 1, window: '15m', algorithm: 'fixed-window', overrides: true });
    router.post('/login', login, (ctx) => {
      ctx.status = 204;
    });
    app.use(router.routes());
    const server = app.callback();
    await request(server).post('/login');
    expect((await request(server).post('/login')).status).toBe(429);
    await login.setOverride('ip:127.0.0.1', 3);
    const raised = await request(server).post('/login');
    expect([raised.status, raised.headers['ratelimit-policy']]).toEqual([204, '"1-per-15m";q=3;w=900']);
    expect((await login.getOverride('ip:127.0.0.1'))?.expiresAtMs).toBeUndefined();
    await login.removeOverride('ip:127.0.0.1');
    expect((await request(server).post('/login')).status).toBe(429);
  });

  it('hands requestWasSuccessful the response: here a 404 is no failure', async () => {
    const app = new Koa();
    app.use(
      koaRateLimit({
        limit: 1,
        window: '1h',
        skipSuccessfulRequests: true,
        requestWasSuccessful: (_ctx, response) => response.status < 500,
      }),
    );
    app.use((ctx) => {
      ctx.status = Number(ctx.get('x-status'));
    });
    const server = app.callback();
    expect((await request(server).get('/').set('x-status', '404')).status).toBe(404);
    await settle();
    expect((await request(server).get('/').set('x-status', '500')).status).toBe(500);
    await settle();
    expect((await request(server).get('/').set('x-status', '200')).status).toBe(429);
  });

  it('warns TOLLGATE_DOUBLE_COUNT for one limiter mounted app-wide and again on a route', async () => {
    const { logger, codes } = recorder();
    const app = new Koa();
    const limiter = koaRateLimit({ limit: 10, window: '1m', logger });
    const router = new Router();
    router.get('/', limiter, (ctx) => {
      ctx.body = { remaining: ctx.state.rateLimit?.remaining };
    });
    app.use(limiter).use(router.routes());
    expect((await request(app.callback()).get('/')).body).toEqual({ remaining: 8 });
    expect(codes()).toEqual(['TOLLGATE_DOUBLE_COUNT']);
  });

  it('warns TOLLGATE_CREATED_IN_HANDLER for a limiter made per request, which limits nothing', async () => {
    const { logger, codes } = recorder();
    const app = new Koa();
    const limit = Koa === Koa3 ? 5 : 6;
    app.use((ctx, next) => koaRateLimit({ limit, window: '1m', logger })(ctx, next));
    app.use((ctx) => {
      ctx.body = 'ok';
    });
    const statuses = [];
    for (let i = 0; i < limit + 2; i++) statuses.push((await request(app.callback()).get('/')).status);
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(codes()).toEqual(['TOLLGATE_CREATED_IN_HANDLER']);
  });

  it('warns TOLLGATE_PERMISSIVE_TRUST_PROXY for app.proxy without maxIpsCount only', async () => {
    for (const [maxIpsCount, expected] of [
      [0, ['TOLLGATE_PERMISSIVE_TRUST_PROXY']],
      [1, []],
    ] as const) {
      const { logger, codes } = recorder();
      const app = new Koa({ proxy: true, maxIpsCount });
      app.use(koaRateLimit({ limit: 10, window: '1m', logger }));
      app.use((ctx) => {
        ctx.body = 'ok';
      });
      await request(app.callback()).get('/');
      expect(codes()).toEqual(expected);
    }
  });
});

describe.each([
  ['Fastify 5', fastify5],
  ['Fastify 4', fastify4],
])('%s', (_name, fastify) => {
  it('leaves unknown URLs unlimited by itself; fastify.rateLimit() limits the 404 handler', async () => {
    const bare = fastify();
    await bare.register(tollgate, { limit: 2, window: '1m' });
    const scans = [];
    for (let i = 0; i < 4; i++) scans.push((await bare.inject('/wp-admin')).statusCode);
    expect(scans).toEqual([404, 404, 404, 404]);

    const app = fastify();
    await app.register(tollgate, { limit: 100, window: '1m' });
    app.setNotFoundHandler({ preHandler: app.rateLimit({ limit: 2, window: '1m' }) }, (_request, reply) =>
      reply.code(404).send({ error: 'not found' }),
    );
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await app.inject(`/wp-admin/${i}`));
    expect(answers.map((answer) => answer.statusCode)).toEqual([404, 404, 429]);
    expect(answers[0]?.headers.ratelimit).toBe('"2-per-1m";r=1;t=30');
    expect(answers[2]?.headers['retry-after']).toBe('30');
  });

  it('puts the info on request.rateLimit, typed; resetKey on a hook and on fastify.rateLimit', async () => {
    const app = fastify();
    await app.register(tollgate, { limit: 1, window: '1m' });
    const search = app.rateLimit({ limit: 2, window: '1m', name: 'search' });
    app.get('/search', { onRequest: search, config: { rateLimit: false } }, async (request) => ({
      remaining: request.rateLimit?.remaining,
    }));
    app.get('/', async (request) => ({ remaining: request.rateLimit?.remaining }));
    expect((await app.inject('/search')).json()).toEqual({ remaining: 1 });
    await app.inject('/search');
    expect((await app.inject('/search')).statusCode).toBe(429);
    await search.resetKey('ip:127.0.0.1');
    expect((await app.inject('/search')).json()).toEqual({ remaining: 1 });
    expect((await app.inject('/')).json()).toEqual({ remaining: 0 });
    expect((await app.inject('/')).statusCode).toBe(429);
    await app.rateLimit.resetKey('ip:127.0.0.1'); // the plugin's own limiters: the app-wide one here
    expect((await app.inject('/')).statusCode).toBe(200);
  });

  it('sets an override in the plugin’s limiters that have overrides, and on a hook of its own', async () => {
    const app = fastify();
    await app.register(tollgate, { limit: 1, window: '1m', algorithm: 'fixed-window', overrides: true });
    const search = app.rateLimit({ limit: 1, window: '1m', name: 'search' });
    app.get('/search', { onRequest: search, config: { rateLimit: false } }, async () => 'ok');
    app.get('/', async () => 'ok');
    app.get('/plain', { config: { rateLimit: { overrides: false, name: 'plain' } } }, async () => 'ok');
    for (const url of ['/', '/search', '/plain']) await app.inject(url);
    await app.rateLimit.setOverride('ip:127.0.0.1', 2); // the app-wide limiter: '/plain' has none
    const raised = await app.inject('/');
    expect([raised.statusCode, raised.headers['ratelimit-policy']]).toEqual([200, '"1-per-1m";q=2;w=60']);
    expect((await app.inject('/plain')).statusCode).toBe(429);
    expect((await app.inject('/search')).statusCode).toBe(429);
    await search.setOverride('ip:127.0.0.1', 2);
    expect((await app.inject('/search')).statusCode).toBe(200);
    expect((await app.rateLimit.getOverride('ip:127.0.0.1'))?.policies[0]?.limit).toBe(2);
    await app.rateLimit.removeOverride('ip:127.0.0.1');
    expect((await app.inject('/')).statusCode).toBe(429);
  });

  it("stacks a fastify.rateLimit() hook on a route's own limiter: both in the headers, the last in request.rateLimit", async () => {
    const app = fastify();
    await app.register(tollgate, { global: false });
    app.get(
      '/report',
      {
        config: { rateLimit: { limit: 10, window: '1m', name: 'route' } },
        onRequest: app.rateLimit({
          name: 'report-hook',
          policies: { limit: 2, window: '1h', name: 'reports' },
        }),
      },
      async (request) => ({ limiter: request.rateLimit?.limiter }),
    );
    const response = await app.inject('/report');
    expect(response.headers['ratelimit-policy']).toBe('"10-per-1m";q=10;w=60, "reports";q=2;w=3600');
    expect(response.json()).toEqual({ limiter: 'report-hook' });
  });

  it("runs a route's check in the hook its config.rateLimit.hook names", async () => {
    const app = fastify();
    app.decorateRequest('user', null);
    await app.register(tollgate, { limit: 100, window: '1m' });
    app.addHook('preValidation', async (request) => {
      Object.assign(request, { user: request.headers['x-user'] });
    });
    app.get(
      '/',
      {
        config: {
          rateLimit: {
            limit: 1,
            window: '1m',
            hook: 'preHandler',
            key: (request) => `user:${(request as unknown as { user: string }).user}`,
          },
        },
      },
      async () => 'ok',
    );
    const as = async (user: string) =>
      (await app.inject({ url: '/', headers: { 'x-user': user } })).statusCode;
    expect([await as('ada'), await as('ada'), await as('grace')]).toEqual([200, 429, 200]);
  });

  it('hands requestWasSuccessful the reply: here a 404 is no failure', async () => {
    const app = fastify();
    await app.register(tollgate, {
      limit: 1,
      window: '1h',
      skipSuccessfulRequests: true,
      requestWasSuccessful: (_request, reply) => reply.statusCode < 500,
    });
    app.get('/', async (request, reply) => reply.code(Number(request.headers['x-status'])).send());
    const get = async (status: string) =>
      (await app.inject({ url: '/', headers: { 'x-status': status } })).statusCode;
    expect(await get('404')).toBe(404);
    await settle();
    expect(await get('500')).toBe(500);
    await settle();
    expect(await get('200')).toBe(429);
  });

  it('warns TOLLGATE_DOUBLE_COUNT for one hook used twice on a route', async () => {
    const { logger, codes } = recorder();
    const app = fastify();
    await app.register(tollgate, { global: false, logger });
    const hook = app.rateLimit({ limit: 10, window: '1m' });
    app.get('/', { onRequest: hook, preHandler: hook }, async (request) => ({
      remaining: request.rateLimit?.remaining,
    }));
    expect((await app.inject('/')).json()).toEqual({ remaining: 8 });
    expect(codes()).toEqual(['TOLLGATE_DOUBLE_COUNT']);
  });

  it('warns TOLLGATE_CREATED_IN_HANDLER for fastify.rateLimit() called once the app is ready', async () => {
    const { logger, codes } = recorder();
    const app = fastify();
    const limit = fastify === fastify5 ? 7 : 8;
    await app.register(tollgate, { global: false, logger });
    app.get('/', async (request, reply) => {
      await app.rateLimit({ limit, window: '1m' })(request, reply);
      return 'ok';
    });
    expect(codes()).toEqual([]);
    for (let i = 0; i < limit + 1; i++) expect((await app.inject('/')).statusCode).toBe(200);
    expect(codes()).toEqual(['TOLLGATE_CREATED_IN_HANDLER']);
  });

  it('warns TOLLGATE_PERMISSIVE_TRUST_PROXY for trustProxy: true only', async () => {
    for (const [trustProxy, expected] of [
      [true, ['TOLLGATE_PERMISSIVE_TRUST_PROXY']],
      ['127.0.0.1', []],
      [2, []],
    ] as const) {
      const { logger, codes } = recorder();
      const app = fastify({ trustProxy: trustProxy as never }); // Fastify 5's types leave out hop counts
      await app.register(tollgate, { limit: 10, window: '1m', logger });
      app.get('/', async () => 'ok');
      await app.inject('/');
      expect(codes()).toEqual(expected);
    }
  });
});

describe('Fastify, registered twice in one context', () => {
  it('stacks two app-wide limiters, as before fastify.rateLimit existed; the first registration decorates', async () => {
    const app = fastify5();
    await app.register(tollgate, { limit: 100, window: '1m', name: 'minute' });
    await app.register(tollgate, { limit: 2, window: '1h', name: 'hour' });
    app.get('/', async () => 'ok');
    const first = await app.inject('/');
    // Each registration puts its check first among onRequest hooks: the later registration's runs first.
    expect(first.headers['ratelimit-policy']).toBe('"2-per-1h";q=2;w=3600, "100-per-1m";q=100;w=60');
    await app.inject('/');
    expect((await app.inject('/')).statusCode).toBe(429);
    expect(typeof app.rateLimit).toBe('function');
  });
});
