/**
 * Drivers of the scenario table for Web-standard handlers: Hono 4 over a real @hono/node-server and
 * through `app.request()`, and @tollgate/fetch's `check` in a small router served by @hono/node-server.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer, type HttpBindings } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { RateLimitInfo } from '@tollgate/core';
import {
  type FetchRateLimiter,
  type FetchRateLimitOptions,
  rateLimit as fetchRateLimit,
} from '@tollgate/fetch';
import { rateLimit as honoRateLimit, RateLimitError, type RateLimitVariables } from '@tollgate/hono';
import { type Context, Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { AppSpec, FrameworkDriver, LimiterOptions, TestApp, TestResponse } from './app-spec.js';
import { testAnswer } from './test-answer.js';

/** A fetch handler served on a real socket of loopback, as Node apps serve one. */
export interface ListeningServer {
  readonly url: string;
  close(): Promise<void>;
}

/** Serves `fetch` with @hono/node-server on a free port of 127.0.0.1. */
export async function listen(
  fetch: (request: Request, env: HttpBindings) => Response | Promise<Response>,
): Promise<ListeningServer> {
  const server = createAdaptorServer({ fetch: fetch as never, hostname: '127.0.0.1' }) as Server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A response read to its end, headers lower case. */
export async function readResponse(response: Response): Promise<TestResponse> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return { status: response.status, headers, body: await response.text() };
}

/** The leftmost `X-Forwarded-For` entry: the client, when the app trusts every proxy. */
const forwardedClient = (header: string | null | undefined) => header?.split(',')[0]?.trim() || undefined;

type HonoEnv = { Bindings: HttpBindings; Variables: RateLimitVariables & { user?: { id: string } } };

/** Hono the way its users write it: an auth step, the app-wide limiter, route limiters, `c.get`. */
function honoApp(spec: AppSpec, address: (options: LimiterOptions) => object): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  // Hono's own error handling, without its console.error for the handlers' errors the scenarios throw.
  app.onError((error, c) =>
    error instanceof RateLimitError
      ? (error as unknown as { getResponse(): Response }).getResponse()
      : c.text('Internal Server Error', 500),
  );
  app.use(async (c, next) => {
    const id = c.req.header('x-user');
    if (id) c.set('user', { id });
    await next();
  });
  const ok = async (c: Context<HonoEnv>) => {
    const { status, body } = await testAnswer(
      (name) => c.req.header(name),
      (property) => c.get(property as 'rateLimit'),
    );
    return c.body(body, status as ContentfulStatusCode);
  };
  const limiter = (options: LimiterOptions) => honoRateLimit({ ...options, ...address(options) } as never);
  // Opting out in Hono: a route registered before the app-wide limiter answers before it runs.
  for (const route of spec.routes ?? []) if (route.limit === false) app.on(route.method, route.path, ok);
  if (spec.global) app.use(limiter(spec.global));
  for (const route of spec.routes ?? []) {
    if (route.limit === false) continue;
    if (route.limit) app.on(route.method, route.path, limiter(route.limit), ok);
    else app.on(route.method, route.path, ok);
  }
  app.get('/a', ok).get('/b', ok);
  return app;
}

/** Hono on a real listening @hono/node-server, the client IP from its `getConnInfo`. */
const honoNodeServer: FrameworkDriver = {
  name: 'Hono 4 on @hono/node-server',
  reader: {
    header: (c: Context, name) => c.req.header(name),
    userId: (c: Context<HonoEnv>) => c.get('user')?.id,
  },
  async build(spec) {
    const ip = (c: Context) =>
      forwardedClient(c.req.header('x-forwarded-for')) ?? getConnInfo(c).remote.address;
    const app = honoApp(spec, () => (spec.trustProxy ? { getConnInfo, ip } : { getConnInfo }));
    const server = await listen(app.fetch);
    return {
      send: async (method, path, headers = {}, signal = undefined) =>
        readResponse(await fetch(`${server.url}${path}`, { method, headers, signal: signal ?? null })),
      close: () => server.close(),
    };
  },
};

/** Hono through `app.request()`: no socket, so the app says its clients' address with `ip`. */
const honoAppRequest: FrameworkDriver = {
  name: 'Hono 4 through app.request()',
  reader: honoNodeServer.reader,
  async build(spec) {
    const peer = '127.0.0.1';
    const ip = spec.trustProxy
      ? (c: Context) => forwardedClient(c.req.header('x-forwarded-for')) ?? peer
      : () => peer;
    const app = honoApp(spec, () => ({ ip }));
    return {
      // No socket: a client that hangs up aborts the Request's signal, as runtimes do.
      send: async (method, path, headers = {}, signal = undefined) =>
        readResponse(await app.request(path, { method, headers, signal: signal ?? null })),
      close: async () => {},
    };
  },
};

/** A limiter of the fetch router, and where its info goes (`requestPropertyName` is the app's choice). */
interface FetchLimiter {
  readonly limiter: FetchRateLimiter<[HttpBindings]>;
  readonly property: string | false;
}

/**
 * @tollgate/fetch's `check` in a router of a few lines, served by @hono/node-server: each limiter checks
 * the request in turn, the handler runs, and every allowed result's `apply` adds its headers. Where
 * other adapters take `requestPropertyName`, the router puts each result's info under that name itself.
 */
const fetchRouter: FrameworkDriver = {
  name: '@tollgate/fetch check() on @hono/node-server',
  reader: {
    header: (request: Request, name) => request.headers.get(name) ?? undefined,
    userId: (request: Request) => request.headers.get('x-user') ?? undefined,
  },
  async build(spec) {
    const peer = (_request: Request, env: HttpBindings) => env.incoming.socket.remoteAddress;
    const ip = spec.trustProxy
      ? (request: Request, env: HttpBindings) =>
          forwardedClient(request.headers.get('x-forwarded-for')) ?? peer(request, env)
      : peer;
    const limiterOf = (options: LimiterOptions): FetchLimiter => {
      const { requestPropertyName, ...rest } = options;
      const limiter = fetchRateLimit({ ...(rest as FetchRateLimitOptions<[HttpBindings]>), ip });
      return { limiter, property: requestPropertyName ?? 'rateLimit' };
    };
    const global = spec.global ? [limiterOf(spec.global)] : [];
    const routes = (spec.routes ?? []).map((route) => ({
      ...route,
      limiters: route.limit === false ? [] : [...global, ...(route.limit ? [limiterOf(route.limit)] : [])],
    }));
    routes.push(
      { method: 'GET', path: '/a', limiters: global },
      { method: 'GET', path: '/b', limiters: global },
    );

    async function handle(request: Request, env: HttpBindings): Promise<Response> {
      const { pathname } = new URL(request.url);
      const method = request.method === 'HEAD' ? 'GET' : request.method;
      const route = routes.find((r) => r.method === method && r.path === pathname);
      if (!route) return new Response('Not Found', { status: 404 });
      const infos: Record<string, RateLimitInfo> = {};
      const allowed = [];
      for (const { limiter, property } of route.limiters) {
        const result = await limiter.check(request, env);
        if (!result.allowed) return result.response;
        if (property !== false && result.info) infos[property] = result.info;
        allowed.push(result);
      }
      let response: Response;
      try {
        const { status, body } = await testAnswer(
          (name) => request.headers.get(name) ?? undefined,
          (property) => infos[property],
        );
        response = new Response(body, { status });
      } catch {
        response = new Response('Internal Server Error', { status: 500 });
      }
      return allowed.reduceRight((sent, result) => result.apply(sent), response);
    }

    const server = await listen(async (request, env) => {
      try {
        return await handle(request, env);
      } catch (error) {
        // The app's error handling: a RateLimitError (throwOnLimit) carries its status and headers.
        if (error instanceof RateLimitError) {
          return new Response(error.message, { status: error.status, headers: error.headers });
        }
        return new Response('Internal Server Error', { status: 500 });
      }
    });
    return {
      send: async (method, path, headers = {}, signal = undefined) =>
        readResponse(await fetch(`${server.url}${path}`, { method, headers, signal: signal ?? null })),
      close: () => server.close(),
    } satisfies TestApp;
  },
};

export const webDrivers: readonly FrameworkDriver[] = [honoNodeServer, honoAppRequest, fetchRouter];
