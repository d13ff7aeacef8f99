/**
 * Concurrency limits in every framework, over real sockets: at most `limit` requests of a client in
 * progress; a slot comes back when a response ends, or when its client goes away.
 */
import { createServer, request as httpRequest, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MemoryStore, RedisStore, type Store } from '@tollgate/core';
import { concurrencyLimit as expressLimit } from '@tollgate/express';
import { concurrencyLimit as fastifyLimit } from '@tollgate/fastify';
import { concurrencyLimit as koaLimit } from '@tollgate/koa';
import express5 from 'express';
import express4 from 'express4';
import fastify5 from 'fastify';
import fastify4 from 'fastify4';
import Koa3 from 'koa';
import Koa2 from 'koa2';
import { afterAll, describe, expect, it } from 'vitest';
import { connectRedis, uniquePrefix } from '../harness/clients.js';

const redis = await connectRedis();
afterAll(() => redis.disconnect());

/** Requests the handler holds, by their `x-id`, until the test lets them finish. */
class Held {
  readonly #finish = new Map<string, () => void>();
  get count(): number {
    return this.#finish.size;
  }
  hold(id: unknown): Promise<void> {
    return new Promise((resolve) => this.#finish.set(String(id), resolve));
  }
  finish(id: string): void {
    this.#finish.get(id)?.();
    this.#finish.delete(id);
  }
  finishAll(): void {
    for (const id of [...this.#finish.keys()]) this.finish(id);
  }
  async until(count: number): Promise<void> {
    while (this.#finish.size < count) await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

type Build = (options: { limit: number; store: Store }, held: Held) => Promise<RequestListener>;

const key = (headers: Record<string, unknown>) => String(headers['x-client'] ?? 'anyone');

const frameworks: [string, Build][] = [
  ...(
    [
      ['Express 5', express5],
      ['Express 4', express4],
    ] as const
  ).map(([name, express]): [string, Build] => [
    name,
    async (options, held) => {
      const app = (express as typeof express5)();
      app.get('/slow', expressLimit({ ...options, key: (req) => key(req.headers) }), async (req, res) => {
        await held.hold(req.headers['x-id']);
        res.send('done');
      });
      return app;
    },
  ]),
  ...(
    [
      ['Fastify 5', fastify5],
      ['Fastify 4', fastify4],
    ] as const
  ).map(([name, fastify]): [string, Build] => [
    name,
    async (options, held) => {
      let listener: RequestListener | undefined;
      const app = (fastify as typeof fastify5)({
        serverFactory: (handler) => {
          listener = handler;
          return createServer();
        },
      });
      const onRequest = fastifyLimit({ ...options, key: (request) => key(request.headers) });
      app.get('/slow', { onRequest }, async (request) => {
        await held.hold(request.headers['x-id']);
        return 'done';
      });
      await app.ready();
      return listener as RequestListener;
    },
  ]),
  ...(
    [
      ['Koa 3', Koa3],
      ['Koa 2', Koa2],
    ] as const
  ).map(([name, Koa]): [string, Build] => [
    name,
    async (options, held) => {
      const app = new (Koa as typeof Koa3)();
      app.use(koaLimit({ ...options, key: (ctx) => key(ctx.headers) }));
      app.use(async (ctx) => {
        await held.hold(ctx.headers['x-id']);
        ctx.body = 'done';
      });
      return app.callback();
    },
  ]),
];

const stores: [string, () => Store][] = [
  ['MemoryStore', () => new MemoryStore()],
  ['RedisStore', () => new RedisStore({ client: redis, prefix: uniquePrefix('concurrency') })],
];

let requests = 0;

/** A request to the server, with an `id` of its own; `abort()` hangs up before the answer. */
function send(server: Server, client = 'a') {
  const { port } = server.address() as AddressInfo;
  const id = String(++requests);
  let abort = () => {};
  const answer = new Promise<{ status: number; body: string; contentType: string | undefined }>(
    (resolve, reject) => {
      const headers = { 'x-client': client, 'x-id': id };
      const req = httpRequest({ port, path: '/slow', headers, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk) => (body += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body, contentType: res.headers['content-type'] }),
        );
      });
      req.on('error', reject);
      req.end();
      abort = () => {
        req.on('error', () => {});
        req.destroy();
      };
    },
  );
  return {
    id,
    answer,
    abort() {
      answer.catch(() => {}); // hanging up is the point: no answer is coming
      abort();
    },
  };
}

/**
 * Sends until a request is admitted (held by the handler, `held` then holds `count`): a slot frees on
 * the server's 'close', a moment after the client has seen the end of the answer.
 */
async function sendUntilAdmitted(server: Server, held: Held, count: number, client = 'a') {
  for (;;) {
    const attempt = send(server, client);
    const outcome = await Promise.race([
      attempt.answer.then((answer) => answer.status),
      held.until(count).then(() => 'held' as const),
    ]);
    if (outcome === 'held') return attempt;
    expect(outcome).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe.each(frameworks)('%s concurrencyLimit', (_name, build) => {
  describe.each(stores)('on %s', (_storeName, makeStore) => {
    it('holds at most the limit in progress; a finished or abandoned request frees its slot', async () => {
      const held = new Held();
      const server = createServer(await build({ limit: 2, store: makeStore() }, held));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const first = send(server);
        const second = send(server);
        await held.until(2);
        const refused = await send(server).answer;
        expect(refused.status).toBe(429);
        expect(refused.contentType).toBe('application/problem+json'); // RFC 9457 has no charset
        expect(JSON.parse(refused.body)).toMatchObject({
          detail: 'Too many requests in progress: at most 2 at once.',
        });
        const other = send(server, 'b'); // another client is not held back
        await held.until(3);
        held.finish(other.id);
        expect((await other.answer).status).toBe(200);

        held.finish(first.id); // the first one finishes
        expect((await first.answer).status).toBe(200);
        const third = await sendUntilAdmitted(server, held, 2); // in its place
        second.abort(); // a client goes away while its request is in progress
        const fourth = await sendUntilAdmitted(server, held, 3); // in the abandoned one's place
        expect((await send(server).answer).status).toBe(429); // and no more
        held.finishAll();
        expect((await third.answer).status).toBe(200);
        expect((await fourth.answer).status).toBe(200);
      } finally {
        held.finishAll();
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });
});

describe('concurrencyLimit options', () => {
  it.each([
    [{}, /limit must be a positive whole number/],
    [{ limit: 2, max: 3 }, /unknown concurrencyLimit option 'max'/],
    [{ limit: 2, onStoreError: 'open' }, /onStoreError must be/],
    [{ limit: 2, key: 'ip' }, /key must be a function/],
    [{ limit: 2, statusCode: 200 }, /statusCode must be/],
  ])('rejects %j at construction, naming the adapter', (options, message) => {
    expect(() => expressLimit(options as never)).toThrow(message);
    expect(() => expressLimit(options as never)).toThrow(/^@tollgate\/express: /);
  });
});
