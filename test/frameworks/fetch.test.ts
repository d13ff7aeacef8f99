/**
 * @tollgate/fetch beyond the scenario table: refunds and leases that wait for a streamed body's end
 * (and not for a cancel), the client address, `onLimited`, immutable headers, stacked limiters, and the
 * insurance limiter when Redis dies.
 */
import { ClientAddressError, RedisStore } from '@tollgate/core';
import {
  concurrencyLimit,
  type FetchHandler,
  rateLimit,
  withConcurrencyLimit,
  withRateLimit,
} from '@tollgate/fetch';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { connectRedis } from '../harness/clients.js';
import { startRedisServer } from '../harness/redis-server.js';
import { draft10 } from './parse-headers.js';
import { listen, readResponse } from './web-drivers.js';
import { type ControlledBody, controlledBody, keptLog, storeKinds } from './web-fixtures.js';

const redis: Redis = await connectRedis();
afterAll(() => redis.disconnect());

const CLIENT = '203.0.113.7';
const ip = () => CLIENT;
const get = () => new Request('http://app.test/report');

/** A handler streaming a body the test controls; `bodies` has the latest last. */
function streaming(): { handler: FetchHandler; bodies: ControlledBody[] } {
  const bodies: ControlledBody[] = [];
  const handler = () => {
    const body = controlledBody();
    bodies.push(body);
    body.push('first chunk');
    return new Response(body.body, { headers: { 'content-type': 'text/plain' } });
  };
  return { handler, bodies };
}

describe.each(storeKinds(() => redis))('on $name', ({ create }) => {
  it('gives a successful streamed response its token back only once the body was read to the end', async () => {
    const { store, idle } = create();
    const { handler, bodies } = streaming();
    const limited = withRateLimit(handler, {
      limit: 1,
      window: '1h',
      store,
      skipSuccessfulRequests: true,
      ip,
    });
    const first = await limited(get());
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit')).toBe('"1-per-1h";r=0;t=3600');
    const reader = (first.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('first chunk');
    await idle();
    // Still streaming: the request holds its token, so a second one is refused.
    expect((await limited(get())).status).toBe(429);
    bodies[0]?.end();
    expect((await reader.read()).done).toBe(true);
    await idle();
    expect((await limited(get())).status).toBe(200);
  });

  it('settles a metered cost with the Response sent, once its body was read', async () => {
    const { store, idle } = create();
    const limited = withRateLimit(() => new Response('ok', { headers: { 'x-tokens-used': '1' } }), {
      limit: 10,
      window: '1h',
      store,
      ip,
      cost: { reserve: 5, settle: (_request, response) => Number(response.headers.get('x-tokens-used')) },
    });
    const first = await limited(get());
    expect(first.headers.get('ratelimit')).toBe('"10-per-1h";r=5;t=360');
    await first.text();
    await idle();
    expect((await limited(get())).headers.get('ratelimit')).toBe('"10-per-1h";r=4;t=360'); // 10 - 1 - 5
  });

  it('keeps a cancelled stream counted: a client cannot erase its charge by hanging up', async () => {
    const { store, idle } = create();
    const { handler } = streaming();
    const limited = withRateLimit(handler, {
      limit: 1,
      window: '1h',
      store,
      skipSuccessfulRequests: true,
      ip,
    });
    const first = await limited(get());
    await first.body?.cancel();
    await idle();
    expect((await limited(get())).status).toBe(429);
  });

  it('judges a response without a body at once, and a handler that throws as its 500', async () => {
    const { store, idle } = create();
    let fail = false;
    const limited = withRateLimit(
      () => {
        if (fail) throw new Error('the handler failed');
        return new Response(null, { status: 404 });
      },
      { limit: 1, window: '1h', store, skipFailedRequests: true, ip },
    );
    expect((await limited(get())).status).toBe(404);
    await idle();
    fail = true;
    await expect(limited(get())).rejects.toThrow('the handler failed');
    await idle();
    fail = false;
    expect((await limited(get())).status).toBe(404); // both given back
  });

  it('holds a concurrency slot until the body ends, and gives it back on a cancel', async () => {
    const { leases: store } = create();
    const { handler, bodies } = streaming();
    const limited = withConcurrencyLimit(handler, { limit: 1, store, ip });
    const first = await limited(get());
    const busy = await limited(get());
    expect(busy.status).toBe(429);
    expect(busy.headers.get('content-type')).toBe('application/problem+json');
    bodies[0]?.end();
    await new Response(first.body).text();
    const second = await limited(get());
    expect(second.status).toBe(200);
    await second.body?.cancel();
    await expect.poll(async () => (await limited(get())).status).toBe(200);
  });

  it('releases a slot over a real socket when the client goes away mid-stream', async () => {
    const { leases: store } = create();
    const { handler, bodies } = streaming();
    const server = await listen(withConcurrencyLimit(handler, { limit: 1, store, ip }));
    try {
      const aborted = new AbortController();
      const first = await fetch(`${server.url}/`, { signal: aborted.signal });
      expect(first.status).toBe(200);
      expect((await fetch(`${server.url}/`)).status).toBe(429);
      aborted.abort();
      await bodies[0]?.cancelled; // the server cancelled the body when the socket closed
      let next = await fetch(`${server.url}/`);
      while (next.status === 429) next = await fetch(`${server.url}/`); // the release is on its way to the store
      expect(next.status).toBe(200);
      bodies[1]?.end();
      expect(await next.text()).toBe('first chunk');
    } finally {
      await server.close();
    }
  });

  it('over a real socket, refunds a streamed success once sent, and not one the client abandoned', async () => {
    const { store, idle } = create();
    const { handler, bodies } = streaming();
    const server = await listen(
      withRateLimit(handler, { limit: 1, window: '1h', store, skipSuccessfulRequests: true, ip }),
    );
    try {
      const first = await fetch(`${server.url}/`);
      expect((await fetch(`${server.url}/`)).status).toBe(429); // mid-stream: still charged
      bodies[0]?.end();
      expect(await first.text()).toBe('first chunk');
      await idle();
      const aborted = new AbortController();
      expect((await fetch(`${server.url}/`, { signal: aborted.signal })).status).toBe(200);
      aborted.abort();
      await bodies[1]?.cancelled;
      await idle();
      expect((await fetch(`${server.url}/`)).status).toBe(429);
    } finally {
      await server.close();
    }
  });

  it('keeps the charge of a response never applied, and releases a slot on release()', async () => {
    const { leases: store } = create();
    const slots = concurrencyLimit({ limit: 1, store, ip });
    const slot = await slots.check(get());
    expect(slot.allowed).toBe(true);
    expect((await slots.check(get())).allowed).toBe(false);
    if (slot.allowed) slot.release();
    await expect.poll(async () => (await slots.check(get())).allowed).toBe(true);
  });
});

describe('while Redis is down', () => {
  it('answers with the insurance limiter, headers and 429s included, while Redis is down', async () => {
    const server = await startRedisServer();
    const client = await connectRedis(server.url);
    const { lines, logger } = keptLog();
    try {
      const store = new RedisStore({ client, prefix: 'fetch-outage:', logger });
      const limiter = rateLimit({ limit: 2, window: '1h', store, logger, timeout: '5s', ip });
      await server.kill();
      const results = [];
      for (let i = 0; i < 3; i++) results.push(await limiter.check(get()));
      expect(results.map((result) => result.allowed)).toEqual([true, true, false]);
      expect(results.every((result) => result.info?.decision.degraded)).toBe(true);
      const refused = results[2];
      if (refused?.allowed === false) expect(refused.response.headers.get('retry-after')).toBe('1800');
      expect(lines.some((line) => line.startsWith('[TOLLGATE_STORE_UNAVAILABLE]'))).toBe(true);
    } finally {
      client.disconnect();
      await server.stop();
    }
  });
});

describe('the client address', () => {
  it('is required at construction, unless a key identifies requests', () => {
    expect(() => rateLimit({ limit: 5 })).toThrow(
      /@tollgate\/fetch: give ip, a function returning the client's address .* all clients would share one bucket/,
    );
    expect(() => concurrencyLimit({ limit: 1 })).toThrow(/give ip/);
    expect(() => withRateLimit(() => new Response('ok'), { limit: 5 })).toThrow(/give ip/);
    expect(() => rateLimit({ limit: 5, ip: 'x-real-ip' as never })).toThrow(/give ip/);
    expect(() =>
      rateLimit({ limit: 5, key: (request) => request.headers.get('x-user') ?? undefined }),
    ).not.toThrow();
  });

  it('refuses a request with neither an identity nor an address: it never shares a bucket', async () => {
    const { lines, logger } = keptLog();
    const limiter = rateLimit({
      limit: 5,
      logger,
      key: (request) => request.headers.get('x-user') ?? undefined,
    });
    expect(
      (await limiter.check(new Request('http://app.test/', { headers: { 'x-user': 'ada' } }))).allowed,
    ).toBe(true);
    await expect(limiter.check(get())).rejects.toBeInstanceOf(ClientAddressError);
    expect(lines.filter((line) => line.startsWith('[TOLLGATE_MISSING_IP]'))).toHaveLength(1);
  });

  it("gets the handler's other arguments, as Deno's info and @hono/node-server's env are", async () => {
    type Info = { remoteAddr: { hostname: string } };
    const limited = withRateLimit((_request: Request, _info: Info) => new Response('ok'), {
      limit: 1,
      window: '1h',
      ip: (_request, info) => info.remoteAddr.hostname,
    });
    const from = (hostname: string) => limited(get(), { remoteAddr: { hostname } });
    expect([(await from('198.51.100.1')).status, (await from('198.51.100.1')).status]).toEqual([200, 429]);
    expect((await from('198.51.100.2')).status).toBe(200);
  });

  it('from X-Forwarded-For: a bucket per forwarded client, and no warning that proxies are untrusted', async () => {
    const { lines, logger } = keptLog();
    const limiter = rateLimit({
      limit: 1,
      window: '1h',
      logger,
      ip: (request) => request.headers.get('x-forwarded-for')?.split(',')[0]?.trim(),
    });
    const from = async (forwarded: string) =>
      (await limiter.check(new Request('http://app.test/', { headers: { 'x-forwarded-for': forwarded } })))
        .allowed;
    expect([await from('198.51.100.1'), await from('198.51.100.2'), await from('198.51.100.1')]).toEqual([
      true,
      true,
      false,
    ]);
    expect(lines.join('\n')).not.toContain('TOLLGATE_UNTRUSTED_FORWARDED_FOR');
  });

  it('from the socket while X-Forwarded-For names someone else: warned about once', async () => {
    const { lines, logger } = keptLog();
    const limiter = rateLimit({ limit: 5, logger, ip: () => '10.0.0.2' });
    for (let i = 0; i < 3; i++) {
      await limiter.check(
        new Request('http://app.test/', { headers: { 'x-forwarded-for': '198.51.100.1' } }),
      );
    }
    expect(lines.filter((line) => line.startsWith('[TOLLGATE_UNTRUSTED_FORWARDED_FOR]'))).toHaveLength(1);
  });
});

describe('answers', () => {
  it('onLimited answers a limited request, with the rate-limit headers added', async () => {
    const limiter = rateLimit({
      limit: 1,
      window: '1m',
      ip,
      onLimited: (request, info) =>
        Response.json(
          { path: new URL(request.url).pathname, retryAfterMs: info.decision.retryAfterMs },
          { status: 429 },
        ),
    });
    await limiter.check(get());
    const result = await limiter.check(get());
    expect(result.allowed).toBe(false);
    if (result.allowed) return;
    expect(result.info.remaining).toBe(0);
    expect(await result.response.json()).toEqual({ path: '/report', retryAfterMs: expect.any(Number) });
    expect(result.response.headers.get('retry-after')).toBe('60');
    expect(result.response.headers.get('ratelimit')).toBe('"1-per-1m";r=0;t=60');
  });

  it('refuses options of the other adapters, naming the one to use', () => {
    expect(() => rateLimit({ ip, handler: () => {} } as never)).toThrow(
      /no handler option here; use onLimited/,
    );
    expect(() => rateLimit({ ip, requestPropertyName: 'limit' } as never)).toThrow(/result\.info/);
    expect(() => rateLimit({ ip, onLimited: () => new Response(), throwOnLimit: true })).toThrow(
      /either onLimited or throwOnLimit/,
    );
  });

  it('copies a response whose headers are immutable (a redirect, a fetch() answer) to add its headers', async () => {
    const limited = withRateLimit(() => Response.redirect('http://app.test/elsewhere', 302), {
      limit: 5,
      window: '1m',
      ip,
    });
    const response = await limited(get());
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('http://app.test/elsewhere');
    expect(response.headers.get('ratelimit')).toBe('"5-per-1m";r=4;t=12');
  });

  it('stacks the headers of nested limiters: both policies in draft-11 lists, on a request charged to both', async () => {
    const route = withRateLimit(() => new Response('ok'), { limit: 2, window: '1m', name: 'route', ip });
    const site = withRateLimit(route, { limit: 10, window: '1m', name: 'site', ip });
    const response = await site(get());
    expect(draft10(await readResponse(response), 'ratelimit')).toEqual({
      '10-per-1m': { r: 9, t: 6 },
      '2-per-1m': { r: 1, t: 30 },
    });
  });

  it('gives the info of allowed requests in the result, and undefined for skipped ones', async () => {
    const limiter = rateLimit({
      limit: 3,
      window: '1m',
      ip,
      skip: (request) => request.method === 'OPTIONS',
    });
    const allowed = await limiter.check(get());
    expect(allowed).toMatchObject({ allowed: true, info: { limit: 3, remaining: 2, key: `ip:${CLIENT}` } });
    if (allowed.allowed) expect(allowed.headers.RateLimit).toBe('"3-per-1m";r=2;t=20');
    const skipped = await limiter.check(new Request('http://app.test/', { method: 'OPTIONS' }));
    expect(skipped).toMatchObject({ allowed: true, info: undefined, headers: {} });
  });

  it('sets and removes a client’s override on the wrapped handler, shown in its headers', async () => {
    const limited = withRateLimit(() => new Response('ok'), {
      limit: 1,
      window: '1h',
      algorithm: 'fixed-window',
      ip,
      overrides: true,
    });
    await limited(get());
    expect((await limited(get())).status).toBe(429);
    await limited.setOverride(`ip:${CLIENT}`, 3);
    const raised = await limited(get());
    expect([raised.status, raised.headers.get('ratelimit-policy')]).toEqual([200, '"1-per-1h";q=3;w=3600']);
    await limited.removeOverride(`ip:${CLIENT}`);
    expect((await limited(get())).status).toBe(429);
  });

  it('resetKey refills a key', async () => {
    const limited = withRateLimit(() => new Response('ok'), { limit: 1, window: '1h', ip });
    await limited(get());
    expect((await limited(get())).status).toBe(429);
    await limited.resetKey(`ip:${CLIENT}`);
    expect((await limited(get())).status).toBe(200);
  });
});
