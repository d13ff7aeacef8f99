/**
 * Regression: body-reading middleware ended a Web answer before it was sent. Hono's `etag()`, registered
 * before the limiter, hashes a clone of the body, so the limiter saw the body read to its end before the
 * client had the first bytes: a concurrency slot was freed at once, and a download the client hung up on
 * was refunded as a success. On @hono/node-server the answer now ends when the Node.js response does.
 * Over a real listening server, an 8 MB streamed body, a client that reads a little and then hangs up;
 * on both stores.
 */
import type { ServerResponse } from 'node:http';
import { request as httpRequest } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { HttpBindings } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { LeaseRequest, Store } from '@tollgate/core';
import { withConcurrencyLimit } from '@tollgate/fetch';
import { concurrencyLimit, rateLimit } from '@tollgate/hono';
import { Hono, type MiddlewareHandler } from 'hono';
import { etag } from 'hono/etag';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { connectRedis } from '../harness/clients.js';
import { type ListeningServer, listen } from './web-drivers.js';
import { storeKinds } from './web-fixtures.js';

const redis: Redis = await connectRedis();
afterAll(() => redis.disconnect());

const BODY_BYTES = 8 * 1024 * 1024;
const CHUNK = new Uint8Array(64 * 1024).fill(120);

/** An 8 MB body, made chunk by chunk as it is read. */
function largeBody(): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= BODY_BYTES) return controller.close();
      sent += CHUNK.byteLength;
      controller.enqueue(CHUNK);
    },
  });
}

/** When the server saw each response close, by the request's `x-id`. */
class Closes {
  readonly #byId = new Map<string, Promise<void>>();

  /** Watches `outgoing`; call before the response can close. */
  watch(id: string | undefined, outgoing: ServerResponse): void {
    if (id !== undefined) this.#byId.set(id, new Promise((resolve) => outgoing.once('close', resolve)));
  }

  closed(id: string): Promise<void> {
    return this.#byId.get(id) ?? Promise.reject(new Error(`no request ${id} reached the server`));
  }
}

/**
 * `inner`, counting its operations in flight (a lease's release included), so a test can wait for
 * what a response's close set off instead of sleeping.
 */
function trackedStore(inner: Store): { store: Store; idle(): Promise<void> } {
  let inFlight = 0;
  const track = async <T>(operation: Promise<T>): Promise<T> => {
    inFlight++;
    try {
      return await operation;
    } finally {
      inFlight--;
    }
  };
  const store: Store = {
    update: (request) => track(inner.update(request)),
    reset: (key, policies) => track(inner.reset(key, policies)),
    lease: (request: LeaseRequest) => track((inner.lease as NonNullable<Store['lease']>)(request)),
    ...(inner.local !== undefined ? { local: inner.local } : {}),
  };
  return {
    store,
    async idle() {
      await nextTurn();
      while (inFlight > 0) await nextTurn();
    },
  };
}

/** A download under way: its status, after the head and the first bytes arrived. */
interface Download {
  readonly status: number;
  /** Destroys the socket, the rest of the body unread. */
  hangUp(): void;
  /** Reads the rest of the body; resolves to the bytes received in all. */
  readToEnd(): Promise<number>;
}

/** Starts `GET path` and reads only its first bytes, then stops reading (the socket fills up). */
function startDownload(server: ListeningServer, path: string, headers: Record<string, string>) {
  return new Promise<Download>((resolve, reject) => {
    const req = httpRequest(`${server.url}${path}`, { headers, agent: false });
    req.on('error', reject);
    req.on('response', (res) => {
      let received = 0;
      res.once('data', (chunk: Buffer) => {
        received += chunk.byteLength;
        res.pause();
        resolve({
          status: res.statusCode ?? 0,
          hangUp() {
            req.on('error', () => {});
            req.destroy();
          },
          readToEnd: () =>
            new Promise((done, failed) => {
              res.on('data', (more: Buffer) => {
                received += more.byteLength;
              });
              res.on('end', () => done(received));
              res.on('error', failed);
              res.resume();
            }),
        });
      });
    });
    req.end();
  });
}

/** The status of `GET /small`, for `x-user`. */
async function probe(server: ListeningServer, user: string): Promise<number> {
  const response = await fetch(`${server.url}/small`, { headers: { 'x-user': user } });
  await response.arrayBuffer();
  return response.status;
}

/** Hono with `etag()` before `limiter`: `GET /big` streams 8 MB, `GET /small` answers `ok`. */
function etagFirstApp(limiter: MiddlewareHandler, closes: Closes): Hono<{ Bindings: HttpBindings }> {
  const app = new Hono<{ Bindings: HttpBindings }>();
  app.use(async (c, next) => {
    closes.watch(c.req.header('x-id'), c.env.outgoing as ServerResponse);
    await next();
  });
  app.use(etag());
  app.use(limiter);
  app.get('/big', (c) => c.body(largeBody(), 200, { 'content-type': 'application/octet-stream' }));
  app.get('/small', (c) => c.text('ok'));
  return app;
}

describe.each(storeKinds(() => redis))('Hono with etag() before the limiter, on $name', ({ create }) => {
  it('holds a concurrency slot while a download etag() hashed is still being sent, and frees it when the client hangs up', async () => {
    const { store, idle } = trackedStore(create().leases);
    const closes = new Closes();
    const app = etagFirstApp(concurrencyLimit({ limit: 1, store, getConnInfo, leaseTtl: '1h' }), closes);
    const server = await listen(app.fetch);
    try {
      const download = await startDownload(server, '/big', { 'x-id': 'a' });
      expect(download.status).toBe(200);
      // The slot is the download's until its socket closes, however early etag() read the body.
      expect([await probe(server, '1'), await probe(server, '1')]).toEqual([429, 429]);
      download.hangUp();
      await closes.closed('a');
      await idle();
      expect(await probe(server, '1')).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('does not refund a download the client hung up on (skipSuccessfulRequests), and refunds one sent to the end', async () => {
    const { store, idle } = trackedStore(create().store);
    const closes = new Closes();
    const key = (c: { req: { header(name: string): string | undefined } }) => c.req.header('x-user');
    const limiter = rateLimit({ limit: 1, window: '1h', store, key, skipSuccessfulRequests: true });
    const app = etagFirstApp(limiter, closes);
    const server = await listen(app.fetch);
    try {
      const abandoned = await startDownload(server, '/big', { 'x-id': 'a', 'x-user': 'gone' });
      expect(abandoned.status).toBe(200);
      abandoned.hangUp();
      await closes.closed('a');
      await idle();
      expect(await probe(server, 'gone')).toBe(429); // the hung-up download still counts

      const complete = await startDownload(server, '/big', { 'x-id': 'b', 'x-user': 'stays' });
      expect(await complete.readToEnd()).toBe(BODY_BYTES);
      await closes.closed('b');
      await idle();
      expect(await probe(server, 'stays')).toBe(200); // sent to the end: a success, given back
    } finally {
      await server.close();
    }
  });
});

describe.each(storeKinds(() => redis))('@tollgate/fetch on @hono/node-server, on $name', ({ create }) => {
  it('holds a concurrency slot while a download a wrapper hashed is still being sent, and frees it when the client hangs up', async () => {
    const { store, idle } = trackedStore(create().leases);
    const closes = new Closes();
    const ip = (_request: Request, env: HttpBindings) => env.incoming.socket.remoteAddress;
    const limited = withConcurrencyLimit<Request, [HttpBindings]>(
      (request) =>
        new URL(request.url).pathname === '/big' ? new Response(largeBody()) : new Response('ok'),
      { limit: 1, store, ip, leaseTtl: '1h' },
    );
    // What etag() does, around the limited handler: hash a clone of the body before it is sent.
    const server = await listen(async (request, env) => {
      closes.watch(request.headers.get('x-id') ?? undefined, env.outgoing as ServerResponse);
      const response = await limited(request, env);
      await response.clone().arrayBuffer();
      return response;
    });
    try {
      const download = await startDownload(server, '/big', { 'x-id': 'a' });
      expect(download.status).toBe(200);
      expect([await probe(server, '1'), await probe(server, '1')]).toEqual([429, 429]);
      download.hangUp();
      await closes.closed('a');
      await idle();
      expect(await probe(server, '1')).toBe(200);
    } finally {
      await server.close();
    }
  });
});
