/**
 * Reserve, then settle, through the real frameworks (Express 4/5, Fastify 4/5, Koa 2/3) on real
 * sockets, on both stores: an LLM token budget reserves 1,000 tokens per request and settles at the
 * usage the handler reports, in a response header or, for a streamed answer, in the framework's
 * per-request state. What the budget has left is the budget minus the true usage, streamed and aborted
 * answers included; a failure given back under `skipFailedRequests` is not settled; and a request that
 * brings the budget near its end is told to `onNearLimit`.
 */
import { request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import Router from '@koa/router';
import {
  createLimiter,
  MemoryStore,
  type MeteredCost,
  type RateLimitInfo,
  RedisStore,
  type Store,
} from '@tollgate/core';
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
import { manualClock } from '../harness/manual-clock.js';
import { close, listen } from './lifecycle-sockets.js';
import { settlingStore } from './settling-store.js';

const portOf = (server: Server) => (server.address() as AddressInfo).port;

const redis: Redis = await connectRedis();
afterAll(() => redis.disconnect());

const NAME = 'llm-tokens';
const BUDGET = 10_000; // tokens per hour, per API key
const RESERVED = 1_000;

/** The limiter every app below mounts app-wide, but for the framework's own `settle`. */
interface BudgetOptions {
  readonly store: Store;
  readonly skipFailedRequests?: boolean;
  readonly nearLimit?: number;
  readonly onNearLimit?: (request: never, info: RateLimitInfo) => void;
}

const limiterOptions = (options: BudgetOptions, settle: MeteredCost<never, never>['settle']) => ({
  ...options,
  limit: BUDGET,
  window: '1h',
  name: NAME,
  key: (request: never, access: { header(request: never, name: string): string | undefined }) =>
    access.header(request, 'x-api-key'),
  cost: { reserve: RESERVED, settle },
});

/** A promise and its resolver. */
function deferred() {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

/** What a streaming handler waits for (`release`), and when the server saw a response close, by API key. */
class Signals {
  readonly #byKey = new Map<string, Record<'closed' | 'gate', ReturnType<typeof deferred>>>();

  #of(key: string) {
    let signals = this.#byKey.get(key);
    if (signals === undefined) {
      signals = { closed: deferred(), gate: deferred() };
      this.#byKey.set(key, signals);
    }
    return signals;
  }

  /** Call first in a handler: the limiter's own 'close' listener, added earlier, runs before this one. */
  enter(key: string, raw: { once(event: 'close', listener: () => void): unknown }): Promise<void> {
    const signals = this.#of(key);
    raw.once('close', signals.closed.resolve);
    return signals.gate.promise;
  }
  closed = (key: string) => this.#of(key).closed.promise;
  release = (key: string) => this.#of(key).gate.resolve();
}

interface BudgetApp {
  readonly port: number;
  readonly signals: Signals;
  close(): Promise<void>;
}

/**
 * - `GET /complete`: answers `x-status` (200 by default) and reports the usage it was sent in
 *   `x-usage` as the response header `x-tokens-used`, as an LLM gateway would;
 * - `GET /stream`: streams a first chunk, records `x-partial` tokens as used so far in the framework's
 *   per-request state, waits for `release`, then records `x-usage` and ends the stream.
 */
type Framework = { readonly name: string; build(options: BudgetOptions): Promise<BudgetApp> };

function expressApp(name: string, express: typeof express5): Framework {
  // The usage header of a completed answer, else what a streaming handler recorded in `res.locals`.
  const settle = (_req: express5.Request, res: express5.Response) =>
    Number(res.getHeader('x-tokens-used') ?? res.locals.tokensUsed);
  return {
    name,
    async build(options) {
      const signals = new Signals();
      const app = express();
      app.use(expressRateLimit(limiterOptions(options, settle as never) as never));
      app.get('/complete', (req, res) => {
        res.setHeader('x-tokens-used', req.get('x-usage') as string);
        res.status(Number(req.get('x-status') ?? 200)).send('answer');
      });
      app.get('/stream', async (req, res) => {
        const released = signals.enter(req.get('x-api-key') as string, res);
        res.locals.tokensUsed = Number(req.get('x-partial'));
        res.status(200).write('first ');
        await released;
        res.locals.tokensUsed = Number(req.get('x-usage'));
        res.end('last');
      });
      const server = await listen(app);
      return { port: portOf(server), signals, close: () => close(server) };
    },
  };
}

function fastifyApp(name: string, fastify: typeof fastify5): Framework {
  type Request = { headers: Record<string, unknown>; tokensUsed: number | null };
  const settle = (request: Request, reply: { getHeader(name: string): unknown }) =>
    Number(reply.getHeader('x-tokens-used') ?? request.tokensUsed);
  return {
    name,
    async build(options) {
      const signals = new Signals();
      const app = fastify();
      app.decorateRequest('tokensUsed', null);
      await app.register(tollgate, limiterOptions(options, settle as never) as never);
      app.get('/complete', async (request, reply) =>
        reply
          .code(Number(request.headers['x-status'] ?? 200))
          .header('x-tokens-used', request.headers['x-usage'] as string)
          .send('answer'),
      );
      app.get('/stream', async (request, reply) => {
        const used = request as unknown as Request;
        const released = signals.enter(request.headers['x-api-key'] as string, reply.raw);
        used.tokensUsed = Number(request.headers['x-partial']);
        const body = new PassThrough();
        body.write('first ');
        void released.then(() => {
          used.tokensUsed = Number(request.headers['x-usage']);
          body.end('last');
        });
        return reply.send(body);
      });
      await app.listen({ port: 0, host: '127.0.0.1' });
      return { port: (app.server.address() as AddressInfo).port, signals, close: () => app.close() };
    },
  };
}

function koaApp(name: string, Koa: typeof Koa3): Framework {
  const settle = (ctx: Koa3.Context, response: Koa3.Context['response']) =>
    Number(response.get('x-tokens-used') || ctx.state.tokensUsed);
  return {
    name,
    async build(options) {
      const signals = new Signals();
      const app = new Koa();
      app.silent = true;
      app.use(koaRateLimit(limiterOptions(options, settle as never) as never));
      const router = new Router();
      router.get('/complete', (ctx) => {
        ctx.set('x-tokens-used', ctx.get('x-usage'));
        ctx.status = Number(ctx.get('x-status') || 200);
        ctx.body = 'answer';
      });
      router.get('/stream', (ctx) => {
        const released = signals.enter(ctx.get('x-api-key'), ctx.res);
        ctx.state.tokensUsed = Number(ctx.get('x-partial'));
        const body = new PassThrough();
        body.write('first ');
        ctx.body = body;
        void released.then(() => {
          ctx.state.tokensUsed = Number(ctx.get('x-usage'));
          body.end('last');
        });
      });
      app.use(router.routes());
      const server = await listen(app.callback());
      return { port: portOf(server), signals, close: () => close(server) };
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

// The clock stands still: nothing refills, so what the budget has left is what was spent.
const stores: { name: string; create(clock: () => number): Store }[] = [
  { name: 'MemoryStore', create: (clock) => new MemoryStore({ clock }) },
  {
    name: 'RedisStore',
    create: (clock) => new RedisStore({ client: redis, prefix: uniquePrefix('reserve-settle'), clock }),
  },
];

/** One request on a connection of its own; resolves with the whole answer. */
function send(port: number, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; body: string; headers: IncomingMessage['headers'] }>(
    (resolve, reject) => {
      const request = httpRequest({ port, host: '127.0.0.1', path, headers, agent: false }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body, headers: response.headers }),
        );
      });
      request.on('error', reject);
      request.end();
    },
  );
}

/** Opens a streamed answer and resolves once its first chunk has come. */
function open(port: number, headers: Record<string, string>) {
  return new Promise<{ abort(): void; rest: Promise<string> }>((resolve) => {
    const request = httpRequest(
      { port, host: '127.0.0.1', path: '/stream', headers, agent: false },
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
  });
}

/** Usages between 0 and 2,000 tokens, from a seed the failure message names. */
function usages(seed: number, count: number): number[] {
  let a = seed >>> 0;
  return Array.from({ length: count }, () => {
    a = (Math.imul(a, 1_103_515_245) + 12_345) >>> 0;
    return a % 2_001;
  });
}

const apps: BudgetApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

describe.each(frameworks)('$name', (framework) => {
  describe.each(stores)('on $name', (storeSetup) => {
    async function setup(options: Omit<BudgetOptions, 'store'> = {}) {
      const { store, idle } = settlingStore(storeSetup.create(manualClock().now));
      const app = await framework.build({ ...options, store });
      apps.push(app);
      // No deny cache: the probe asks the store every time.
      const probe = createLimiter({
        store,
        policies: { limit: BUDGET, window: '1h' },
        namespace: NAME,
        denyCache: false,
      });
      const remaining = async (key: string) => (await probe.peek(key)).decidedBy.remaining;
      /** Waits for the server to see `key`'s response close, and for the settle that set off. */
      const settled = async (key: string) => {
        await app.signals.closed(key);
        await idle();
      };
      const complete = async (key: string, usage: number, status = 200) => {
        const answer = await send(app.port, '/complete', {
          'x-api-key': key,
          'x-usage': String(usage),
          'x-status': String(status),
        });
        await idle();
        return answer;
      };
      return { app, remaining, settled, complete, idle };
    }

    it('an LLM token budget: what is left is the budget minus the tokens the answers really used', async () => {
      const { remaining, complete } = await setup();
      const seed = Date.now() % 100_000;
      let spent = 0;
      for (const usage of usages(seed, 5)) {
        const answer = await complete('key-a', usage);
        expect(answer.status, `seed ${seed}`).toBe(200);
        expect(answer.headers['x-tokens-used']).toBe(String(usage));
        spent += usage;
        expect(await remaining('key-a'), `seed ${seed}`).toBe(BUDGET - spent);
      }
    });

    it('an answer that used more than reserved is charged the rest, into debt: the next request waits', async () => {
      const { remaining, complete } = await setup();
      await complete('key-b', 3_000);
      expect(await remaining('key-b')).toBe(7_000);
      await complete('key-b', 12_000); // 6,000 left after the reservation, 11,000 more charged: 5,000 owed
      expect(await remaining('key-b')).toBe(0);
      const refused = await complete('key-b', 0);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    });

    it('a streamed answer holds its reservation while it streams, and is settled when the stream ends', async () => {
      const { app, remaining, settled } = await setup();
      const stream = await open(app.port, { 'x-api-key': 'key-c', 'x-partial': '200', 'x-usage': '1700' });
      expect(await remaining('key-c')).toBe(BUDGET - RESERVED);
      app.signals.release('key-c');
      expect(await stream.rest).toBe('first last');
      await settled('key-c');
      expect(await remaining('key-c')).toBe(BUDGET - 1_700);
    });

    it('a stream the client aborts is settled at what the app had recorded when it closed', async () => {
      const { app, remaining, settled } = await setup();
      (await open(app.port, { 'x-api-key': 'key-d', 'x-partial': '350', 'x-usage': '1700' })).abort();
      await settled('key-d');
      expect(await remaining('key-d')).toBe(BUDGET - 350);
      app.signals.release('key-d'); // the handler finishes to nobody: settled already, once
    });

    it('with skipFailedRequests, a failed answer gets its whole reservation back and is not settled', async () => {
      const { remaining, complete } = await setup({ skipFailedRequests: true });
      expect((await complete('key-e', 800, 500)).status).toBe(500);
      expect(await remaining('key-e')).toBe(BUDGET);
      await complete('key-e', 800);
      expect(await remaining('key-e')).toBe(BUDGET - 800);
    });

    it('tells onNearLimit about the request whose reservation brings the budget near its end', async () => {
      const near: number[] = [];
      const { complete } = await setup({
        nearLimit: 0.9,
        onNearLimit: (_request, info) => void near.push(info.remaining),
      });
      await complete('key-f', 7_500); // reserved 1,000 of 10,000: far; then 7,500 used
      expect(near).toEqual([]);
      await complete('key-f', 500); // reserved 1,000 more: 8,500 used
      expect(near).toEqual([]);
      await complete('key-f', 500); // 8,000 used, reserved 1,000 more: 9,000, near
      expect(near).toEqual([1_000]);
    });
  });
});
