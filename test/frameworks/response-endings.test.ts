/**
 * How a response ends decides whether `skipSuccessfulRequests` / `skipFailedRequests` give its tokens
 * back, through real sockets in every framework and on both stores: a streamed body is judged when it
 * ends, an aborted response always counts, an error the handler threw is a failure. And the rule is
 * exact under concurrency: N parallel failed logins admit exactly the limit.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import Router from '@koa/router';
import { createLimiter, MemoryStore, RedisStore, type Store } from '@tollgate/core';
import { rateLimit as expressRateLimit } from '@tollgate/express';
import { tollgate } from '@tollgate/fastify';
import { rateLimit as koaRateLimit } from '@tollgate/koa';
import express5 from 'express';
import express4 from 'express4';
import fastify5 from 'fastify';
import fastify4 from 'fastify4';
import type { Redis } from 'ioredis';
import Koa3 from 'koa';
import Koa2 from 'koa2';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { connectRedis, uniquePrefix } from '../harness/clients.js';
import { settlingStore } from './settling-store.js';

const redis: Redis = await connectRedis();
afterAll(() => redis.disconnect());

/** The limiter every app below mounts app-wide: keyed by `x-client`, named so a probe can read it. */
interface EndingsOptions {
  readonly store: Store;
  readonly limit: number;
  readonly skipSuccessfulRequests?: boolean;
  readonly skipFailedRequests?: boolean;
}

const NAME = 'endings';
const limiterOptions = (options: EndingsOptions) => ({
  ...options,
  window: '1d',
  name: NAME,
  key: (request: never, access: { header(request: never, name: string): string | undefined }) =>
    access.header(request, 'x-client'),
});

/** A promise and its resolver. */
function deferred() {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

/**
 * What the handlers report and wait for, by the request's `x-client`: `entered` when the handler began,
 * `closed` when the server saw the response close (completed or aborted), and `release`, which lets a
 * held response go on.
 */
class Signals {
  readonly #byClient = new Map<string, Record<'entered' | 'closed' | 'gate', ReturnType<typeof deferred>>>();

  #of(client: string) {
    let signals = this.#byClient.get(client);
    if (signals === undefined) {
      signals = { entered: deferred(), closed: deferred(), gate: deferred() };
      this.#byClient.set(client, signals);
    }
    return signals;
  }

  /** Call first in a handler: the limiter's own 'close' listener, added earlier, runs before this one. */
  enter(client: string, raw: { once(event: 'close', listener: () => void): unknown }): Promise<void> {
    const signals = this.#of(client);
    raw.once('close', signals.closed.resolve);
    signals.entered.resolve();
    return signals.gate.promise;
  }
  entered = (client: string) => this.#of(client).entered.promise;
  closed = (client: string) => this.#of(client).closed.promise;
  release = (client: string) => this.#of(client).gate.resolve();
}

/** A listening app with the routes below, each framework's own way. */
interface EndingsApp {
  readonly port: number;
  readonly signals: Signals;
  close(): Promise<void>;
}

/**
 * - `POST /login`: answers `x-status` at once;
 * - `GET /stream`: sends 200 and a first chunk, waits for `release`, then ends the body;
 * - `GET /slow`: waits for `release`, then answers 200;
 * - `GET /boom`: throws (the framework answers 500).
 */
type Framework = { readonly name: string; build(options: EndingsOptions): Promise<EndingsApp> };

async function listen(
  handler: Parameters<typeof createServer>[1],
): Promise<{ server: Server; port: number }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

const stop = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

function expressApp(name: string, express: typeof express5): Framework {
  return {
    name,
    async build(options) {
      const signals = new Signals();
      const app = express();
      app.use(expressRateLimit(limiterOptions(options) as never));
      app.post('/login', (req, res) => void res.status(Number(req.get('x-status'))).send('login'));
      app.get('/stream', async (req, res) => {
        const released = signals.enter(req.get('x-client') as string, res);
        res.status(200).write('first ');
        await released;
        res.end('last');
      });
      app.get('/slow', async (req, res) => {
        await signals.enter(req.get('x-client') as string, res);
        res.send('slow');
      });
      app.get('/boom', (req, res) => {
        void signals.enter(req.get('x-client') as string, res);
        throw new Error('boom');
      });
      const { server, port } = await listen(app);
      return { port, signals, close: () => stop(server) };
    },
  };
}

function koaApp(name: string, Koa: typeof Koa3): Framework {
  return {
    name,
    async build(options) {
      const signals = new Signals();
      const app = new Koa();
      app.silent = true;
      app.use(koaRateLimit(limiterOptions(options) as never));
      const router = new Router();
      router.post('/login', (ctx) => {
        ctx.status = Number(ctx.get('x-status'));
        ctx.body = 'login';
      });
      router.get('/stream', (ctx) => {
        const released = signals.enter(ctx.get('x-client'), ctx.res);
        const body = new PassThrough();
        body.write('first ');
        ctx.body = body;
        void released.then(() => body.end('last'));
      });
      router.get('/slow', async (ctx) => {
        await signals.enter(ctx.get('x-client'), ctx.res);
        ctx.body = 'slow';
      });
      router.get('/boom', (ctx) => {
        void signals.enter(ctx.get('x-client'), ctx.res);
        throw new Error('boom');
      });
      app.use(router.routes());
      const { server, port } = await listen(app.callback());
      return { port, signals, close: () => stop(server) };
    },
  };
}

function fastifyApp(name: string, fastify: typeof fastify5): Framework {
  return {
    name,
    async build(options) {
      const signals = new Signals();
      const app = fastify();
      await app.register(tollgate, limiterOptions(options) as never);
      const client = (request: { headers: Record<string, unknown> }) => request.headers['x-client'] as string;
      app.post('/login', async (request, reply) =>
        reply.code(Number(request.headers['x-status'])).send('login'),
      );
      app.get('/stream', async (request, reply) => {
        const released = signals.enter(client(request), reply.raw);
        const body = new PassThrough();
        body.write('first ');
        void released.then(() => body.end('last'));
        return reply.send(body);
      });
      app.get('/slow', async (request, reply) => {
        await signals.enter(client(request), reply.raw);
        return 'slow';
      });
      app.get('/boom', async (request, reply) => {
        void signals.enter(client(request), reply.raw);
        throw new Error('boom');
      });
      await app.listen({ port: 0, host: '127.0.0.1' });
      const port = (app.server.address() as AddressInfo).port;
      return { port, signals, close: () => app.close() };
    },
  };
}

const frameworks: Framework[] = [
  expressApp('Express 5', express5),
  expressApp('Express 4', express4),
  fastifyApp('Fastify 5', fastify5),
  fastifyApp('Fastify 4', fastify4),
  koaApp('Koa 3', Koa3),
  koaApp('Koa 2', Koa2),
];

/** The stores, on real time unless given a `clock`. */
const stores: { name: string; create(clock?: () => number): Store }[] = [
  { name: 'MemoryStore', create: (clock) => new MemoryStore(clock ? { clock } : {}) },
  {
    name: 'RedisStore',
    create: (clock) =>
      new RedisStore({ client: redis, prefix: uniquePrefix('endings'), ...(clock ? { clock } : {}) }),
  },
];

/** One request on a connection of its own; resolves with the whole answer. */
function send(port: number, method: string, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; body: string; headers: IncomingMessage['headers'] }>(
    (resolve, reject) => {
      const request = httpRequest(
        { port, host: '127.0.0.1', method, path, headers, agent: false },
        (response) => {
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (chunk) => (body += chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, body, headers: response.headers }),
          );
        },
      );
      request.on('error', reject);
      request.end();
    },
  );
}

/** Opens a request and resolves once its first chunk has come, or else once `started` resolves. */
function open(port: number, path: string, client: string, started?: Promise<void>) {
  return new Promise<{ abort(): void; rest: Promise<string> }>((resolve, reject) => {
    const request = httpRequest(
      { port, host: '127.0.0.1', path, headers: { 'x-client': client }, agent: false },
      (response) => {
        let body = '';
        const rest = new Promise<string>((done) => response.on('end', () => done(body)));
        response.setEncoding('utf8');
        response.once('data', (chunk) => {
          body += chunk;
          response.on('data', (more) => (body += more));
          resolve({ abort: () => request.destroy(), rest });
        });
      },
    );
    request.on('error', () => {}); // aborting is the point
    request.end();
    void started?.then(() => resolve({ abort: () => request.destroy(), rest: Promise.resolve('') }), reject);
  });
}

const apps: EndingsApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

describe.each(frameworks)('$name', (framework) => {
  describe.each(stores)('on $name', (storeSetup) => {
    async function setup(options: Omit<EndingsOptions, 'store'>, clock?: () => number) {
      const { store, idle } = settlingStore(storeSetup.create(clock));
      const app = await framework.build({ ...options, store });
      apps.push(app);
      // No deny cache: the probe asks the store every time.
      const probe = createLimiter({
        store,
        policies: { limit: options.limit, window: '1d' },
        namespace: NAME,
        denyCache: false,
      });
      const remaining = async (client: string) => (await probe.peek(client)).decidedBy.remaining;
      /** Waits for the server to see `client`'s response close, and for what that set off in the store. */
      const settled = async (client: string) => {
        await app.signals.closed(client);
        await idle();
      };
      return { app, remaining, settled, idle };
    }

    it('a streamed success holds its token while it streams, and gets it back when the stream ends', async () => {
      const { app, remaining, settled } = await setup({ limit: 2, skipSuccessfulRequests: true });
      const stream = await open(app.port, '/stream', 'streamer');
      expect(await remaining('streamer')).toBe(1);
      app.signals.release('streamer');
      expect(await stream.rest).toBe('first last');
      await settled('streamer');
      expect(await remaining('streamer')).toBe(2);
    });

    it('a stream the client aborts counts, under skipSuccessfulRequests', async () => {
      const { app, remaining, settled } = await setup({ limit: 2, skipSuccessfulRequests: true });
      (await open(app.port, '/stream', 'quitter')).abort();
      await settled('quitter');
      expect(await remaining('quitter')).toBe(1);
    });

    it('a response the client aborts before it began counts, under skipFailedRequests', async () => {
      const { app, remaining, settled } = await setup({ limit: 2, skipFailedRequests: true });
      (await open(app.port, '/slow', 'impatient', app.signals.entered('impatient'))).abort();
      await settled('impatient');
      expect(await remaining('impatient')).toBe(1);
    });

    it('an error the handler threw is a failure: given back under skipFailedRequests', async () => {
      const { app, remaining, settled } = await setup({ limit: 2, skipFailedRequests: true });
      expect((await send(app.port, 'GET', '/boom', { 'x-client': 'clumsy' })).status).toBe(500);
      await settled('clumsy');
      expect(await remaining('clumsy')).toBe(2);
    });

    it('N parallel failed logins admit exactly the limit; parallel successes are given back, never more', async () => {
      // Time stands still: a token bucket's refund gives back its charge less what refilled since, so
      // holds that overlap leave the bucket a fraction of a token short until that much has refilled.
      // Which responses give back is the point here, not refill.
      const frozenMs = Date.now();
      const { app, remaining, idle } = await setup(
        { limit: 5, skipSuccessfulRequests: true },
        () => frozenMs,
      );
      const login = (status: number) =>
        send(app.port, 'POST', '/login', { 'x-client': 'mallory', 'x-status': `${status}` });
      const failures = await Promise.all(Array.from({ length: 40 }, () => login(401)));
      const statuses = failures.map((response) => response.status);
      expect(statuses.filter((status) => status === 401)).toHaveLength(5);
      expect(statuses.filter((status) => status === 429)).toHaveLength(35);
      expect(await remaining('mallory')).toBe(0);

      const fresh = 'mallory-2';
      const mixed = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          send(app.port, 'POST', '/login', { 'x-client': fresh, 'x-status': i % 2 ? '200' : '401' }),
        ),
      );
      const admittedFailures = mixed.filter((response) => response.status === 401).length;
      expect(admittedFailures).toBeGreaterThan(0);
      expect(admittedFailures).toBeLessThanOrEqual(5);
      // Every success gave back exactly its own token, once its response had ended: no more, no less.
      await idle();
      expect(await remaining(fresh)).toBe(5 - admittedFailures);
    });
  });
});
