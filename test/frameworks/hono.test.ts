/**
 * @tollgate/hono beyond the scenario table: refunds and leases that wait for a streamed body's end (and
 * not for a client that went away), HEAD answers whose body Hono drops, the client address, the typed
 * `c.get('rateLimit')`, `handler`, `throwOnLimit` under Hono's own error handling, and the insurance
 * limiter when Redis dies.
 */
import { getConnInfo } from '@hono/node-server/conninfo';
import { MemoryStore, RedisStore } from '@tollgate/core';
import { concurrencyLimit, type RateLimitInfo, type RateLimitVariables, rateLimit } from '@tollgate/hono';
import { Hono, type MiddlewareHandler } from 'hono';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, expectTypeOf, it } from 'vitest';
import { connectRedis } from '../harness/clients.js';
import { startRedisServer } from '../harness/redis-server.js';
import { draft10 } from './parse-headers.js';
import { settlingStore } from './settling-store.js';
import { listen, readResponse } from './web-drivers.js';
import { type ControlledBody, controlledBody, keptLog, storeKinds } from './web-fixtures.js';

const redis: Redis = await connectRedis();
afterAll(() => redis.disconnect());

const ip = () => '203.0.113.7';

/** An app whose `GET /stream` streams a body the test controls; `bodies` has the latest last. */
function streamingApp(...middleware: MiddlewareHandler[]): { app: Hono; bodies: ControlledBody[] } {
  const app = new Hono();
  const bodies: ControlledBody[] = [];
  for (const handler of middleware) app.use('/stream', handler);
  app.get('/stream', (c) => {
    const body = controlledBody();
    bodies.push(body);
    body.push('first chunk');
    return c.body(body.body);
  });
  return { app, bodies };
}

describe.each(storeKinds(() => redis))('on $name', ({ create }) => {
  it('refunds a streamed success once it was sent to the end, and not one the client abandoned', async () => {
    const { store, idle } = create();
    const { app, bodies } = streamingApp(
      rateLimit({ limit: 1, window: '1h', store, getConnInfo, skipSuccessfulRequests: true }),
    );
    const server = await listen(app.fetch);
    try {
      const first = await fetch(`${server.url}/stream`);
      expect(first.headers.get('ratelimit')).toBe('"1-per-1h";r=0;t=3600');
      expect((await fetch(`${server.url}/stream`)).status).toBe(429); // mid-stream: still charged
      bodies[0]?.end();
      expect(await first.text()).toBe('first chunk');
      await idle();
      const aborted = new AbortController();
      expect((await fetch(`${server.url}/stream`, { signal: aborted.signal })).status).toBe(200);
      aborted.abort();
      await bodies[1]?.cancelled;
      await idle();
      expect((await fetch(`${server.url}/stream`)).status).toBe(429);
    } finally {
      await server.close();
    }
  });

  it('through app.request(), refunds once the body was read, and keeps a cancelled one counted', async () => {
    const { store, idle } = create();
    const { app, bodies } = streamingApp(
      rateLimit({ limit: 1, window: '1h', store, ip, skipSuccessfulRequests: true }),
    );
    const first = await app.request('/stream');
    expect((await app.request('/stream')).status).toBe(429);
    bodies[0]?.end();
    expect(await first.text()).toBe('first chunk');
    await idle();
    const second = await app.request('/stream');
    expect(second.status).toBe(200);
    await second.body?.cancel();
    await idle();
    expect((await app.request('/stream')).status).toBe(429);
  });

  it('holds a concurrency slot until the body is sent, and releases it when the client goes away', async () => {
    const { leases: store } = create();
    const { app, bodies } = streamingApp(concurrencyLimit({ limit: 1, store, getConnInfo }));
    const server = await listen(app.fetch);
    try {
      const first = await fetch(`${server.url}/stream`);
      const busy = await fetch(`${server.url}/stream`);
      expect(busy.status).toBe(429);
      expect(busy.headers.get('content-type')).toBe('application/problem+json');
      bodies[0]?.end();
      await first.text();
      const aborted = new AbortController();
      expect((await fetch(`${server.url}/stream`, { signal: aborted.signal })).status).toBe(200);
      aborted.abort();
      await bodies[1]?.cancelled;
      let next = await fetch(`${server.url}/stream`);
      while (next.status === 429) next = await fetch(`${server.url}/stream`); // the release is on its way
      expect(next.status).toBe(200);
      bodies[2]?.end();
      await next.text();
    } finally {
      await server.close();
    }
  });

  it('ends a HEAD answer when it is sent: Hono drops its body unread, which must not hold the slot', async () => {
    const { leases: store } = create();
    const { app } = streamingApp(concurrencyLimit({ limit: 1, store, ip }));
    for (let i = 0; i < 3; i++) {
      await expect.poll(async () => (await app.request('/stream', { method: 'HEAD' })).status).toBe(200);
    }
  });
});

describe('a refusal', () => {
  it('keeps the headers earlier middleware set on the context, beside its own', async () => {
    const app = new Hono();
    app.use(async (c, next) => {
      c.header('Access-Control-Allow-Origin', '*');
      await next();
    });
    app.use(rateLimit({ limit: 1, window: '1h', ip }));
    app.get('/', (c) => c.text('ok'));
    await app.request('/');
    const refused = await app.request('/');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    expect(refused.headers.get('ratelimit')).toBe('"1-per-1h";r=0;t=3600');
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect(JSON.parse(await refused.text())).toMatchObject({ status: 429 });
    const head = await app.request('/', { method: 'HEAD' });
    expect([head.status, head.headers.get('access-control-allow-origin'), await head.text()]).toEqual([
      429,
      '*',
      '',
    ]);
  });
});

describe('the middleware’s key controls', () => {
  it('set and remove a client’s override, shown in its headers', async () => {
    const limit = rateLimit({ limit: 1, window: '1h', algorithm: 'fixed-window', ip, overrides: true });
    const app = new Hono();
    app.use(limit);
    app.get('/', (c) => c.text('ok'));
    await app.request('/');
    expect((await app.request('/')).status).toBe(429);
    await limit.setOverride('ip:203.0.113.7', 3);
    const raised = await app.request('/');
    expect([raised.status, raised.headers.get('ratelimit-policy')]).toEqual([200, '"1-per-1h";q=3;w=3600']);
    await limit.removeOverride('ip:203.0.113.7');
    expect((await app.request('/')).status).toBe(429);
  });
});

describe('the client address', () => {
  it('is getConnInfo, ip, or a key: without any, the limiter is not built', () => {
    expect(() => rateLimit({ limit: 5 })).toThrow(
      /@tollgate\/hono: give getConnInfo \(from hono\/<runtime>, e\.g\. @hono\/node-server\/conninfo\) or ip/,
    );
    expect(() => concurrencyLimit({ limit: 1 })).toThrow(/give getConnInfo/);
    expect(() => rateLimit({ limit: 5, getConnInfo: 'node' as never })).toThrow(
      /getConnInfo must be a function/,
    );
    expect(() => rateLimit({ limit: 5, key: (c) => c.req.header('x-user') })).not.toThrow();
  });

  it("is the socket's, by getConnInfo, over a real server", async () => {
    const app = new Hono<{ Variables: RateLimitVariables }>();
    app.use(rateLimit({ limit: 5, window: '1m', getConnInfo }));
    app.get('/', (c) => c.json({ key: c.get('rateLimit')?.key }));
    const server = await listen(app.fetch);
    try {
      expect(await (await fetch(`${server.url}/`)).json()).toEqual({ key: 'ip:127.0.0.1' });
    } finally {
      await server.close();
    }
  });

  it('from a header a trusted proxy sets: a bucket per client, and no warning that proxies are untrusted', async () => {
    const { lines, logger } = keptLog();
    const app = new Hono();
    app.use(rateLimit({ limit: 1, window: '1h', logger, getConnInfo, ip: (c) => c.req.header('x-real-ip') }));
    app.get('/', (c) => c.text('ok'));
    const server = await listen(app.fetch);
    try {
      const from = async (client: string) =>
        (await fetch(`${server.url}/`, { headers: { 'x-real-ip': client, 'x-forwarded-for': client } }))
          .status;
      expect([await from('198.51.100.1'), await from('198.51.100.2'), await from('198.51.100.1')]).toEqual([
        200, 200, 429,
      ]);
      expect(lines.join('\n')).not.toContain('TOLLGATE_UNTRUSTED_FORWARDED_FOR');
    } finally {
      await server.close();
    }
  });
});

describe('the request and the answer', () => {
  it("types c.get('rateLimit'), declared on the app or inferred from a route's middleware", async () => {
    const app = new Hono<{ Variables: RateLimitVariables }>();
    app.get('/declared', (c) => {
      expectTypeOf(c.get('rateLimit')).toEqualTypeOf<RateLimitInfo | undefined>();
      return c.text('ok');
    });
    const untyped = new Hono();
    untyped.get('/inferred', rateLimit({ limit: 2, window: '1m', ip }), (c) => {
      const info = c.get('rateLimit');
      expectTypeOf(info).toEqualTypeOf<RateLimitInfo | undefined>();
      return c.json({ remaining: info?.remaining, limit: info?.limit });
    });
    expect(await (await untyped.request('/inferred')).json()).toEqual({ remaining: 1, limit: 2 });
  });

  it('handler answers a limited request with the context and info, the headers added', async () => {
    const app = new Hono();
    const seen: string[] = [];
    app.use(
      rateLimit({
        limit: 1,
        window: '1m',
        ip,
        handler: (c, info) => {
          seen.push(`${c.req.path} ${info.key} ${info.decision.reason}`);
          return c.json({ error: 'slow down' }, 429);
        },
      }),
    );
    app.get('/x', (c) => c.text('ok'));
    await app.request('/x');
    const limited = await readResponse(await app.request('/x'));
    expect([limited.status, limited.body]).toEqual([429, '{"error":"slow down"}']);
    expect(limited.headers['retry-after']).toBe('60');
    expect(draft10(limited, 'ratelimit')).toEqual({ '1-per-1m': { r: 0, t: 60 } });
    expect(seen).toEqual(['/x ip:203.0.113.7 limited']);
  });

  it("throwOnLimit's RateLimitError is answered by Hono's own error handling: its status and headers", async () => {
    const app = new Hono();
    app.use(rateLimit({ limit: 1, window: '1m', ip, throwOnLimit: true }));
    app.get('/x', (c) => c.text('ok'));
    await app.request('/x');
    const limited = await app.request('/x');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('60');
    expect(await limited.text()).toBe('Too Many Requests');
  });

  it('requestWasSuccessful gets the context and the response', async () => {
    const { store, idle } = settlingStore(new MemoryStore());
    const app = new Hono();
    app.use(
      rateLimit({
        limit: 1,
        window: '1h',
        store,
        ip,
        skipSuccessfulRequests: true,
        requestWasSuccessful: (c, response) =>
          c.req.path === '/x' && response.headers.get('x-signed-in') === 'yes',
      }),
    );
    app.get('/x', (c) => c.text('ok', 200, { 'x-signed-in': c.req.query('ok') ?? 'no' }));
    // Read to the end, as a server sends it: the response is judged once it was sent.
    const status = async (path: string) => (await readResponse(await app.request(path))).status;
    expect(await status('/x?ok=yes')).toBe(200);
    await idle();
    expect(await status('/x')).toBe(200); // not a success: counted
    await idle();
    expect(await status('/x?ok=yes')).toBe(429);
  });

  it('settles a metered cost with the Response the handler sent', async () => {
    const { store, idle } = settlingStore(new MemoryStore());
    const app = new Hono();
    app.use(
      rateLimit({
        limit: 10,
        window: '1h',
        store,
        ip,
        cost: { reserve: 5, settle: (_c, response) => Number(response.headers.get('x-tokens-used')) },
      }),
    );
    app.get('/x', (c) => c.text('ok', 200, { 'x-tokens-used': '2' }));
    expect((await readResponse(await app.request('/x'))).headers.ratelimit).toBe('"10-per-1h";r=5;t=360');
    await idle();
    expect((await app.request('/x')).headers.get('ratelimit')).toBe('"10-per-1h";r=3;t=360'); // 10 - 2 - 5
  });

  it('warns once about a limiter created while a request is handled', async () => {
    const { lines, logger } = keptLog();
    const app = new Hono();
    app.get('/', async (c, next) => rateLimit({ limit: 5, ip, logger, name: 'per-request' })(c, next));
    app.get('/', (c) => c.text('ok'));
    await app.request('/');
    await app.request('/');
    expect(lines.filter((line) => line.startsWith('[TOLLGATE_CREATED_IN_HANDLER]'))).toHaveLength(1);
  });
});

describe('while Redis is down', () => {
  it('answers with the insurance limiter: headers and 429s as usual', async () => {
    const server = await startRedisServer();
    const client = await connectRedis(server.url);
    const { lines, logger } = keptLog();
    try {
      const store = new RedisStore({ client, prefix: 'hono-outage:', logger });
      const app = new Hono<{ Variables: RateLimitVariables }>();
      app.use(rateLimit({ limit: 2, window: '1h', store, logger, timeout: '5s', ip }));
      app.get('/', (c) => c.json({ degraded: c.get('rateLimit')?.decision.degraded }));
      await server.kill();
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await readResponse(await app.request('/')));
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 429]);
      expect(answers[0]?.body).toBe('{"degraded":true}');
      expect(answers[2]?.headers['retry-after']).toBe('1800');
      expect(lines.some((line) => line.startsWith('[TOLLGATE_STORE_UNAVAILABLE]'))).toBe(true);
    } finally {
      client.disconnect();
      await server.stop();
    }
  });
});
