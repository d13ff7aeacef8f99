/** Express 4/5, Fastify 4/5 and Koa 2/3 drivers: each builds an `AppSpec` the framework's own way. */
import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import { rateLimit as expressRateLimit } from '@tollgate/express';
import { tollgate } from '@tollgate/fastify';
import { rateLimit as koaRateLimit } from '@tollgate/koa';
import express5 from 'express';
import express4 from 'express4';
import fastify5, { type FastifyReply, type FastifyRequest } from 'fastify';
import fastify4 from 'fastify4';
import Koa3 from 'koa';
import Koa2 from 'koa2';
import request from 'supertest';
import type { AppSpec, FrameworkDriver, TestApp, TestResponse } from './app-spec.js';
import { close, listen } from './lifecycle-sockets.js';
import { testAnswer } from './test-answer.js';

type AnyRequest = { headers: Record<string, string | string[] | undefined> } & Record<string, unknown>;

function firstHeader(headers: AnyRequest['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Where a request that may hang up is sent: supertest has no way to hang up quietly, so the app is
 * served on a loopback socket of its own, on first use, and asked with `fetch`.
 */
function hangUpServer(listener: RequestListener) {
  let server: Promise<Server> | undefined;
  return {
    async send(method: string, path: string, headers: Record<string, string>, signal: AbortSignal) {
      server ??= listen(listener);
      const { port } = (await server).address() as AddressInfo;
      return fromFetch(await fetch(`http://127.0.0.1:${port}${path}`, { method, headers, signal }));
    },
    close: async () => {
      if (server !== undefined) await close(await server);
    },
  };
}

/** A `fetch` response read to its end, headers lower case. */
async function fromFetch(response: Response): Promise<TestResponse> {
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: await response.text(),
  };
}

function fromSupertest(response: request.Response): TestResponse {
  return {
    status: response.status,
    headers: response.headers as Record<string, string>,
    body: response.text ?? '',
  };
}

function expressDriver(name: string, express: typeof express5): FrameworkDriver {
  return {
    name,
    reader: {
      header: (req: AnyRequest, header) => firstHeader(req.headers, header),
      userId: (req: AnyRequest) => (req.user as { id: string } | undefined)?.id,
    },
    async build(spec: AppSpec): Promise<TestApp> {
      const app = express();
      if (spec.trustProxy) app.set('trust proxy', true);
      app.use((req, _res, next) => {
        const id = req.get('x-user');
        Object.assign(req, { user: id ? { id } : undefined });
        next();
      });
      const ok = (req: express5.Request, res: express5.Response, next: express5.NextFunction) => {
        const answer = testAnswer(
          (name) => req.get(name),
          (property) => (req as unknown as Record<string, unknown>)[property],
        );
        answer.then(({ status, body }) => res.status(status).send(body), next);
      };
      // Opting out in Express: mount the route before the app-wide limiter.
      for (const route of spec.routes ?? [])
        if (route.limit === false) app[verb(route.method)](route.path, ok);
      if (spec.global) app.use(expressRateLimit(spec.global as never));
      for (const route of spec.routes ?? []) {
        if (route.limit === false) continue;
        const own = route.limit ? [expressRateLimit(route.limit as never)] : [];
        app[verb(route.method)](route.path, ...own, ok);
      }
      app.get(['/a', '/b'], ok);
      const hangingUp = hangUpServer(app);
      return {
        send: async (method, path, headers = {}, signal = undefined) =>
          signal === undefined
            ? fromSupertest(await request(app)[verb(method)](path).set(headers))
            : hangingUp.send(method, path, headers, signal),
        close: hangingUp.close,
      };
    },
  };
}

function fastifyDriver(name: string, fastify: typeof fastify5): FrameworkDriver {
  return {
    name,
    reader: {
      header: (req: AnyRequest, header) => firstHeader(req.headers, header),
      userId: (req: AnyRequest) => (req.user as { id: string } | null)?.id,
    },
    async build(spec: AppSpec): Promise<TestApp> {
      const app = fastify({ trustProxy: spec.trustProxy ?? false });
      app.decorateRequest('user', null);
      app.addHook('onRequest', async (req) => {
        const id = firstHeader(req.headers, 'x-user');
        Object.assign(req, { user: id ? { id } : null });
      });
      await app.register(tollgate as never, (spec.global ?? { global: false }) as never);
      const ok = async (request: FastifyRequest, reply: FastifyReply) => {
        const { status, body } = await testAnswer(
          (name) => firstHeader(request.headers, name),
          (property) => (request as unknown as Record<string, unknown>)[property],
        );
        return reply.code(status).send(body);
      };
      for (const route of spec.routes ?? []) {
        const config = route.limit === undefined ? {} : { rateLimit: route.limit };
        app.route({ method: route.method, url: route.path, config: config as never, handler: ok });
      }
      app.get('/a', ok);
      app.get('/b', ok);
      await app.ready();
      let url: string | undefined;
      return {
        async send(method, path, headers = {}, signal = undefined) {
          if (signal !== undefined) {
            // inject() has no socket to close: a client that hangs up needs a real one.
            url ??= await app.listen({ port: 0, host: '127.0.0.1' });
            return fromFetch(await fetch(`${url}${path}`, { method, headers, signal }));
          }
          const response = await app.inject({ method, url: path, headers });
          return {
            status: response.statusCode,
            headers: response.headers as Record<string, string>,
            body: response.body,
          };
        },
        close: () => app.close(),
      };
    },
  };
}

function koaDriver(name: string, Koa: typeof Koa3): FrameworkDriver {
  return {
    name,
    reader: {
      header: (ctx: { get(name: string): string }, header) => ctx.get(header) || undefined,
      userId: (ctx: { state: { user?: { id: string } } }) => ctx.state.user?.id,
    },
    async build(spec: AppSpec): Promise<TestApp> {
      const app = new Koa();
      app.silent = true;
      app.proxy = spec.trustProxy ?? false;
      app.use(async (ctx, next) => {
        const id = ctx.get('x-user');
        ctx.state.user = id ? { id } : undefined;
        await next();
      });
      const ok = async (ctx: Koa3.Context) => {
        const { status, body } = await testAnswer(
          (name) => ctx.get(name) || undefined,
          (property) => ctx.state[property],
        );
        ctx.status = status;
        ctx.body = body;
      };
      // Opting out in Koa: a router mounted before the app-wide limiter answers these routes first.
      const unlimited = new Router();
      for (const route of spec.routes ?? [])
        if (route.limit === false) unlimited[verb(route.method)](route.path, ok);
      app.use(unlimited.routes());
      if (spec.global) app.use(koaRateLimit(spec.global as never));
      const router = new Router();
      for (const route of spec.routes ?? []) {
        if (route.limit === false) continue;
        const own = route.limit ? [koaRateLimit(route.limit as never)] : [];
        router[verb(route.method)](route.path, ...own, ok);
      }
      router.get('/a', ok).get('/b', ok);
      app.use(router.routes());
      const server = app.callback();
      const hangingUp = hangUpServer(server);
      return {
        send: async (method, path, headers = {}, signal = undefined) =>
          signal === undefined
            ? fromSupertest(await request(server)[verb(method)](path).set(headers))
            : hangingUp.send(method, path, headers, signal),
        close: hangingUp.close,
      };
    },
  };
}

function verb(method: 'GET' | 'HEAD' | 'POST'): 'get' | 'head' | 'post' {
  return method === 'GET' ? 'get' : method === 'HEAD' ? 'head' : 'post';
}

export const drivers: readonly FrameworkDriver[] = [
  expressDriver('Express 5', express5),
  expressDriver('Express 4', express4),
  fastifyDriver('Fastify 5', fastify5),
  fastifyDriver('Fastify 4', fastify4),
  koaDriver('Koa 3', Koa3),
  koaDriver('Koa 2', Koa2),
];
