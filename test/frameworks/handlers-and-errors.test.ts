/** What each adapter does its own framework's way: handlers, error handling, Fastify's plugin options. */
import Router from '@koa/router';
import { MemoryStore, RateLimitError } from '@tollgate/core';
import { rateLimit as expressRateLimit } from '@tollgate/express';
import { tollgate } from '@tollgate/fastify';
import { rateLimit as koaRateLimit } from '@tollgate/koa';
import express from 'express';
import fastify from 'fastify';
import Koa from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

describe('@tollgate/express', () => {
  it('calls handler(req, res, next, info) with the headers already set', async () => {
    const app = express();
    app.use(
      expressRateLimit({
        limit: 1,
        window: '1m',
        handler: (_req, res, _next, info) => {
          res
            .status(503)
            .json({ policy: info.decision.decidedBy.policy, retryAfterMs: info.decision.retryAfterMs });
        },
      }),
    );
    app.get('/', (_req, res) => void res.send('ok'));
    await request(app).get('/');
    const limited = await request(app).get('/');
    expect(limited.status).toBe(503);
    expect(limited.body).toMatchObject({ policy: '1-per-1m' });
    expect(limited.headers['retry-after']).toBe('60');
  });

  it('a route limiter stacked on the app-wide one reports both policies', async () => {
    const app = express();
    app.use(expressRateLimit({ limit: 100, window: '1m', name: 'site' }));
    app.post(
      '/login',
      expressRateLimit({ limit: 5, window: '15m', name: 'login' }),
      (_req, res) => void res.send('ok'),
    );
    const response = await request(app).post('/login');
    expect(response.headers['ratelimit-policy']).toBe('"100-per-1m";q=100;w=60, "5-per-15m";q=5;w=900');
    expect(response.headers.ratelimit).toBe('"100-per-1m";r=99;t=1, "5-per-15m";r=4;t=180');
  });

  it('passes RateLimitError to the error handler with throwOnLimit', async () => {
    const app = express();
    app.use(expressRateLimit({ limit: 1, window: '1m', throwOnLimit: true }));
    app.get('/', (_req, res) => void res.send('ok'));
    app.use((error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res
        .status(error instanceof RateLimitError ? 418 : 500)
        .send(error instanceof RateLimitError ? error.code : '');
    });
    await request(app).get('/');
    const limited = await request(app).get('/');
    expect([limited.status, limited.text]).toEqual([418, 'TOLLGATE_RATE_LIMITED']);
    expect(limited.headers['retry-after']).toBe('60');
  });

  it('throws a clear error for bad options when the middleware is created', () => {
    expect(() => expressRateLimit({ limit: 5, windowMs: 60_000 } as never)).toThrow(
      /@tollgate\/express: unknown option 'windowMs'; use window/,
    );
    expect(() => expressRateLimit({ limit: 5, window: '1 minnute' })).toThrow(
      /@tollgate\/express: window: unknown unit 'minnute' in '1 minnute'; did you mean '1 minute'\?/,
    );
    expect(() => expressRateLimit({ limit: 5, window: '1m', handler: 'x' as never })).toThrow(
      /handler must be a function/,
    );
  });
});

describe('@tollgate/fastify', () => {
  it('with global: false limits only the routes that opt in', async () => {
    const app = fastify();
    await app.register(tollgate, { global: false, store: new MemoryStore() });
    app.get('/open', async () => 'ok');
    app.get('/search', { config: { rateLimit: { limit: 1, window: '1s' } } }, async () => 'ok');
    const statuses = async (url: string) => [
      (await app.inject(url)).statusCode,
      (await app.inject(url)).statusCode,
    ];
    expect(await statuses('/open')).toEqual([200, 200]);
    expect(await statuses('/search')).toEqual([200, 429]);
  });

  it('with global: false, routes may complete a policy the plugin options began', async () => {
    const app = fastify();
    await app.register(tollgate, { global: false, window: '1m', headers: 'draft-6' });
    app.get('/search', { config: { rateLimit: { limit: 2 } } }, async () => 'ok');
    const response = await app.inject('/search');
    expect(response.headers['ratelimit-policy']).toBe('2;w=60');
  });

  it('a route inherits the plugin options it does not set', async () => {
    const app = fastify();
    await app.register(tollgate, { limit: 100, window: '1m', headers: 'draft-6' });
    app.get('/search', { config: { rateLimit: { limit: 2 } } }, async () => 'ok');
    const response = await app.inject('/search');
    expect(response.headers['ratelimit-limit']).toBe('2');
    expect(response.headers['ratelimit-policy']).toBe('2;w=60');
  });

  it('runs in preHandler when asked, so a user set by an auth hook can be the key', async () => {
    const app = fastify();
    app.decorateRequest('user', null);
    await app.register(tollgate, {
      limit: 1,
      window: '1m',
      hook: 'preHandler',
      key: (request) => `user:${(request as unknown as { user: { id: string } }).user.id}`,
    });
    app.addHook('preValidation', async (request) => {
      Object.assign(request, { user: { id: request.headers['x-user'] } });
    });
    app.get('/', async () => 'ok');
    const as = (user: string) => app.inject({ url: '/', headers: { 'x-user': user } });
    expect([(await as('a')).statusCode, (await as('a')).statusCode, (await as('b')).statusCode]).toEqual([
      200, 429, 200,
    ]);
  });

  it("with hook: 'preHandler', runs after the route's own preHandler (where auth may live)", async () => {
    const app = fastify();
    await app.register(tollgate, {
      global: false,
      hook: 'preHandler',
      key: (request) => (request as unknown as { user?: string }).user,
    });
    app.get(
      '/',
      {
        config: { rateLimit: { limit: 1, window: '1m' } },
        preHandler: async (request) => {
          Object.assign(request, { user: `user:${request.headers['x-user']}` });
        },
      },
      async () => 'ok',
    );
    const as = (user: string) => app.inject({ url: '/', headers: { 'x-user': user } });
    expect([(await as('a')).statusCode, (await as('a')).statusCode, (await as('b')).statusCode]).toEqual([
      200, 429, 200,
    ]);
  });

  it("renders RateLimitError through setErrorHandler with throwOnLimit, and calls a route's handler", async () => {
    const app = fastify();
    const frozenClock = () => 1_767_225_600_000;
    await app.register(tollgate, {
      limit: 1,
      window: '1m',
      throwOnLimit: true,
      store: new MemoryStore({ clock: frozenClock }),
    });
    app.setErrorHandler((error, _request, reply) => {
      if (error instanceof RateLimitError)
        return reply.code(429).send({ waitMs: error.info.decision.retryAfterMs });
      return reply.send(error);
    });
    app.get('/', async () => 'ok');
    app.get(
      '/custom',
      {
        config: {
          rateLimit: {
            limit: 1,
            throwOnLimit: false,
            handler: (_req, reply) => reply.code(503).send('busy'),
          },
        },
      },
      async () => 'ok',
    );
    await app.inject('/');
    const limited = await app.inject('/');
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({ waitMs: 60_000 });
    expect(limited.headers['retry-after']).toBe('60');
    await app.inject('/custom');
    const custom = await app.inject('/custom');
    expect([custom.statusCode, custom.body, custom.headers['retry-after']]).toEqual([503, 'busy', '60']);
  });

  it('GET and its automatic HEAD route share one bucket', async () => {
    const app = fastify();
    await app.register(tollgate, { global: false });
    app.get('/doc', { config: { rateLimit: { limit: 1, window: '1m' } } }, async () => 'ok');
    expect((await app.inject({ method: 'HEAD', url: '/doc' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/doc' })).statusCode).toBe(429);
  });

  it('rejects bad plugin options at registration, and bad route options when the route is added', async () => {
    await expect(fastify().register(tollgate, { limit: 5, timeWindow: 1000 } as never)).rejects.toThrow(
      /unknown option 'timeWindow'; use window/,
    );
    await expect(fastify().register(tollgate, { global: false, hook: 'onSend' as never })).rejects.toThrow(
      /hook must be/,
    );
    // With global: false the options are only inherited, and still checked at registration.
    await expect(fastify().register(tollgate, { global: false, timeout: 'soon' as never })).rejects.toThrow(
      /timeout must be/,
    );
    const app = fastify();
    await app.register(tollgate, { global: false });
    expect(() =>
      app.get('/x', { config: { rateLimit: { limit: -1, window: '1m' } } }, async () => 'ok'),
    ).toThrow(/limit must be a positive whole number, or 0/);
  });
});

describe('@tollgate/koa', () => {
  it('calls handler(ctx, info) with the headers already set', async () => {
    const app = new Koa();
    app.use(
      koaRateLimit({
        limit: 1,
        window: '1m',
        handler: (ctx, info) => {
          ctx.status = 429;
          ctx.body = { limitedBy: info.decision.decidedBy.policy };
        },
      }),
    );
    app.use((ctx) => {
      ctx.body = 'ok';
    });
    await request(app.callback()).get('/');
    const limited = await request(app.callback()).get('/');
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ limitedBy: '1-per-1m' });
    expect(limited.headers['retry-after']).toBe('60');
  });

  it('a route limiter stacked on the app-wide one reports both policies', async () => {
    const app = new Koa();
    app.use(koaRateLimit({ limit: 100, window: '1m', name: 'site' }));
    const router = new Router();
    router.post('/login', koaRateLimit({ limit: 5, window: '15m', name: 'login' }), (ctx) => {
      ctx.body = 'ok';
    });
    app.use(router.routes());
    const response = await request(app.callback()).post('/login');
    expect(response.headers['ratelimit-policy']).toBe('"100-per-1m";q=100;w=60, "5-per-15m";q=5;w=900');
  });

  it('throws RateLimitError to upstream error middleware with throwOnLimit, per route with @koa/router', async () => {
    const app = new Koa();
    app.use(async (ctx, next) => {
      try {
        await next();
      } catch (error) {
        if (!(error instanceof RateLimitError)) throw error;
        ctx.status = error.status;
        ctx.set(error.headers);
        ctx.body = { error: 'slow down' };
      }
    });
    const router = new Router();
    router.post('/login', koaRateLimit({ limit: 1, window: '15m', throwOnLimit: true }), (ctx) => {
      ctx.body = 'welcome';
    });
    app.use(router.routes());
    const server = app.callback();
    expect((await request(server).post('/login')).status).toBe(200);
    const limited = await request(server).post('/login');
    expect([limited.status, limited.body]).toEqual([429, { error: 'slow down' }]);
    expect(limited.headers['retry-after']).toBe('900');
  });
});
