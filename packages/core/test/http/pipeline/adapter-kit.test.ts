/**
 * What the core gives adapters beside the lifecycle: the limiters of an app and its routes, the reader of
 * Node-shaped requests, the trust-proxy probe, the writer of Node.js responses and its refusal, the
 * options an adapter spells or answers its own way, and the lifecycle's defaults (the request property,
 * the refused request's info handed to `send`).
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import type {
  NodeResponse,
  RateLimitInfo,
  RateLimitOutcome,
  RateLimitRejection,
} from '../../../src/http/answer/outcome.js';
import { endWithRejection } from '../../../src/http/answer/rejections.js';
import { answersLeftmostForwarded, nodeRequestAccess } from '../../../src/http/identity/node-requests.js';
import { suppliedAddressAccess } from '../../../src/http/identity/supplied-address.js';
import { createAdapterLimiter } from '../../../src/http/pipeline/adapter-limiter.js';
import { createHttpLimiter, type HttpLimiter } from '../../../src/http/pipeline/http-limiter.js';
import {
  handledError,
  type ResponseAccess,
  rateLimitLifecycle,
} from '../../../src/http/pipeline/lifecycle.js';
import { nodeResponses } from '../../../src/http/pipeline/node-responses.js';
import { RouteLimiters } from '../../../src/http/pipeline/route-limiters.js';
import { type FakeRequest, fakeAccess, recordingLogger, storeOnClock } from '../fixtures.js';

/** A response that records what the lifecycle writes; never closed, its head never sent. */
class FakeResponse implements NodeResponse {
  readonly headers: Record<string, string> = {};
  readonly sent: { rejection: RateLimitRejection; info: RateLimitInfo | undefined }[] = [];
  readonly writableEnded = false;
  readonly statusCode = 200;
  once(): void {}
}

const fakeResponses: ResponseAccess<FakeRequest, FakeResponse> = {
  node: (response) => response,
  getHeader: (response, name) => response.headers[name.toLowerCase()],
  setHeaders(response, headers) {
    for (const name in headers) response.headers[name.toLowerCase()] = headers[name] as string;
  },
  removeHeader(response, name) {
    delete response.headers[name.toLowerCase()];
  },
  send(response, rejection, info) {
    response.sent.push({ rejection, info });
  },
};

/** Route limiters over a memory store, whose `make` gives back the limiter and the options it saw. */
function routeLimiters(base: Record<string, unknown>, appWide = true) {
  const { store } = storeOnClock();
  const { logger, warnings } = recordingLogger();
  const seen: { options: Record<string, unknown>; where: string | undefined }[] = [];
  const limiters = new RouteLimiters<FakeRequest, unknown, HttpLimiter<FakeRequest>>(
    { store, logger, ...base },
    {
      adapter: '@tollgate/test',
      access: fakeAccess,
      appWide,
      routeOptionsName: 'route options',
      make(options, build, where) {
        seen.push({ options: { ...options }, where });
        return build(options);
      },
    },
  );
  return { limiters, seen, warnings };
}

/** The info of an outcome that has one. */
function infoOf(outcome: RateLimitOutcome | undefined): RateLimitInfo | undefined {
  return outcome !== undefined && 'info' in outcome ? outcome.info : undefined;
}

describe('RouteLimiters', () => {
  it('makes the app-wide limiter from the base options, and one limiter per route options object', async () => {
    const { limiters, seen } = routeLimiters({ limit: 1, window: '1m' });
    const own = { limit: 2 };
    const route = limiters.ofRoute(own, 'route GET /a');
    expect(limiters.ofRoute(own, 'route HEAD /a')).toBe(route);
    expect(limiters.ofRoute({ limit: 2 }, 'route GET /b')).not.toBe(route);
    // Keyed by another object (one per decorator), one options object makes a limiter per key.
    const [first, second] = [{}, {}];
    const byFirst = limiters.ofRoute(own, 'Orders.list', { key: first });
    expect(byFirst).not.toBe(route);
    expect(limiters.ofRoute(own, 'Orders.list', { key: first })).toBe(byFirst);
    expect(limiters.ofRoute(own, 'Orders.show', { key: second })).not.toBe(byFirst);
    expect(seen.map(({ where }) => where)).toEqual([
      undefined,
      'route GET /a',
      'route GET /b',
      'Orders.list',
      'Orders.show',
    ]);
    expect(seen[1]?.options).toMatchObject({ limit: 2, window: '1m' });
    const client = { ip: '203.0.113.7' };
    expect(infoOf(await limiters.appWide?.check(client))?.limit).toBe(1);
    expect(infoOf(await route.check(client))?.limit).toBe(2);
  });

  it('names the route in its errors, and never inherits the base name', () => {
    const { limiters } = routeLimiters({ limit: 1, window: '1m', name: 'app' });
    expect(() => limiters.ofRoute({ limit: -1 }, 'route GET /x')).toThrow(
      /^@tollgate\/test \(route GET \/x\)/,
    );
    expect(() => limiters.ofRoute([] as never, 'route GET /y')).toThrow(
      /^@tollgate\/test \(route GET \/y\): route options must be options like/,
    );
    expect(limiters.ofRoute({ limit: 3 }, 'route GET /z').name).not.toBe('app');
  });

  it('without an app-wide limiter still checks the base options at once', () => {
    expect(routeLimiters({ limit: 1 }, false).limiters.appWide).toBeUndefined();
    expect(() => routeLimiters({ limit: 'many' }, false)).toThrow(/@tollgate\/test.*limit/);
  });

  it('reaches every limiter with its key controls, but not one made apart', async () => {
    const { limiters } = routeLimiters({ limit: 1, window: '1m', overrides: true });
    const route = limiters.ofRoute({ name: 'route' }, 'route GET /a');
    const apart = limiters.apart({ name: 'apart' }, 'apart', 'apart options');
    const client = { ip: '203.0.113.7' };
    for (const limiter of [limiters.appWide, route, apart]) await limiter?.check(client);
    const { resetKey, setOverride } = limiters; // handed out apart from the object, as adapters do
    await resetKey('ip:203.0.113.7');
    expect((await limiters.appWide?.check(client))?.kind).toBe('allowed');
    expect((await route.check(client))?.kind).toBe('allowed');
    expect((await apart.check(client))?.kind).toBe('limited');
    await setOverride('ip:203.0.113.7', 5);
    expect(infoOf(await route.check(client))?.limit).toBe(5);
    expect(await apart.getOverride('ip:203.0.113.7')).toBeUndefined();
  });
});

describe('nodeRequestAccess', () => {
  const access = nodeRequestAccess<FakeRequest & { headers: Record<string, string | string[]> }>();

  it("reads the framework's IP (an empty one is none), the socket's peer, and a header's first value", () => {
    const request = { ip: '', socket: { remoteAddress: '10.0.0.1' }, headers: { 'x-key': ['a', 'b'] } };
    expect(access.ip(request as never)).toBeUndefined();
    expect(access.socketIp(request as never)).toBe('10.0.0.1');
    expect(access.header(request as never, 'x-key')).toBe('a');
    expect(access.header({ headers: { 'x-key': 'c' } } as never, 'x-key')).toBe('c');
    expect(access.trustsEveryProxy).toBeUndefined();
  });
});

describe('suppliedAddressAccess', () => {
  const header = () => undefined;
  const settings = { adapter: '@tollgate/test', key: undefined, missing: 'give ip' };

  it('reads the IP and the peer from the functions given, each standing in for the other', () => {
    const ip = (request: FakeRequest) => request.ip;
    const peer = (request: FakeRequest) => request.socketIp;
    const request = { ip: '203.0.113.7', socketIp: '10.0.0.1' };
    const both = suppliedAddressAccess({ ip, peer, header }, settings);
    expect([both.ip(request), both.socketIp(request)]).toEqual(['203.0.113.7', '10.0.0.1']);
    const onlyIp = suppliedAddressAccess({ ip, header }, settings);
    expect([onlyIp.ip(request), onlyIp.socketIp(request)]).toEqual(['203.0.113.7', '203.0.113.7']);
    const onlyPeer = suppliedAddressAccess({ peer, header }, settings);
    expect([onlyPeer.ip(request), onlyPeer.socketIp(request)]).toEqual(['10.0.0.1', '10.0.0.1']);
  });

  it('refuses to build one bucket for everyone: no address and no key, or an address that is no function', () => {
    expect(() => suppliedAddressAccess({ header }, settings)).toThrow(
      '@tollgate/test: give ip: without either, all clients would share one bucket',
    );
    expect(() => suppliedAddressAccess({ ip: 'x-real-ip' as never, header }, settings)).toThrow(/give ip/);
    const keyed = suppliedAddressAccess({ header }, { ...settings, key: () => 'user:1' });
    expect(keyed.ip({})).toBeUndefined();
  });
});

describe('answersLeftmostForwarded', () => {
  const leftmost = (raw: { headers: Readonly<Record<string, string | string[] | undefined>> }) =>
    String(raw.headers['x-forwarded-for']).split(', ')[0];

  it('is true only for IP resolution that takes the leftmost X-Forwarded-For entry', () => {
    expect(answersLeftmostForwarded(leftmost)).toBe(true);
    expect(answersLeftmostForwarded((raw) => raw.socket?.remoteAddress)).toBe(false);
    expect(answersLeftmostForwarded((raw) => String(raw.headers['x-forwarded-for']).split(', ').at(-1))).toBe(
      false,
    );
  });

  it('is false when the resolution throws', () => {
    expect(
      answersLeftmostForwarded(() => {
        throw new Error('no raw request here');
      }),
    ).toBe(false);
  });
});

describe('nodeResponses', () => {
  /** A real Node.js response, on a socket that is never connected: what it writes stays in its buffer. */
  function serverResponse(): ServerResponse {
    return new ServerResponse(new IncomingMessage(new Socket()));
  }

  function limiter(limit: number, name: string) {
    const { store } = storeOnClock();
    return createHttpLimiter<FakeRequest, ServerResponse>({ limit, window: '1m', name, store }, fakeAccess, {
      adapter: '@tollgate/test',
    });
  }

  it('sets the headers on the response itself, and a later limiter stacks its fields on the earlier ones', async () => {
    const res = serverResponse();
    const client = { ip: '203.0.113.7' };
    expect(await rateLimitLifecycle(limiter(10, 'app'), nodeResponses)(client, res)).toEqual({
      kind: 'next',
    });
    expect(await rateLimitLifecycle(limiter(3, 'route'), nodeResponses)(client, res)).toEqual({
      kind: 'next',
    });
    expect(res.getHeader('RateLimit-Policy')).toBe('"10-per-1m";q=10;w=60, "3-per-1m";q=3;w=60');
    expect(res.getHeader('RateLimit')).toBe('"10-per-1m";r=9;t=6, "3-per-1m";r=2;t=20');
    expect(res.headersSent).toBe(false);
  });

  it('ends a refused response with the status, the content type as it is and the body', async () => {
    const res = serverResponse();
    const once = limiter(1, 'once');
    const client = { ip: '203.0.113.7' };
    await rateLimitLifecycle(once, nodeResponses)(client, serverResponse());
    expect(await rateLimitLifecycle(once, nodeResponses)(client, res)).toEqual({ kind: 'answered' });
    expect(res.statusCode).toBe(429);
    expect(res.getHeader('Content-Type')).toBe('application/problem+json');
    expect(res.getHeader('Retry-After')).toBe('60');
    expect(res.writableEnded).toBe(true);
  });
});

describe("an adapter's own spelling of the shared options", () => {
  const build = (options: Record<string, unknown>, settings: Record<string, unknown>) =>
    createHttpLimiter(options, fakeAccess, { adapter: '@tollgate/test', ...settings });

  it("reads its name for handler as handler, and names it in handler's errors", () => {
    const onLimited = () => {};
    expect(build({ onLimited }, { handlerName: 'onLimited' }).handler).toBe(onLimited);
    expect(() => build({ handler: onLimited }, { handlerName: 'onLimited' })).toThrow(
      '@tollgate/test: there is no handler option here; use onLimited',
    );
    expect(() => build({ onLimited: 5 }, { handlerName: 'onLimited' })).toThrow(
      /^@tollgate\/test: onLimited /,
    );
    expect(() => build({ onLimited, throwOnLimit: true }, { handlerName: 'onLimited' })).toThrow(
      '@tollgate/test: give either onLimited or throwOnLimit, not both',
    );
    // Without a name of its own, its name is unknown to every adapter.
    expect(() => build({ onLimited }, {})).toThrow(/unknown option 'onLimited'/);
  });

  it('refuses an option it has no use for, saying what to do instead, own fields only', () => {
    const notHere = { requestPropertyName: 'requestPropertyName means nothing here; read the result' };
    expect(() => build({ requestPropertyName: 'limit' }, { notHere })).toThrow(
      '@tollgate/test: requestPropertyName means nothing here; read the result',
    );
    const inherited = Object.create({ requestPropertyName: 'limit' });
    expect(build(inherited, { notHere }).requestPropertyName).toBe('rateLimit');
  });
});

describe("an adapter's warnOnce", () => {
  it('builds a message given as a function only when it logs it, once', () => {
    const { logger, warnings } = recordingLogger();
    const limiter = createHttpLimiter({ logger }, fakeAccess, { adapter: '@tollgate/test' });
    let built = 0;
    const message = () => `route GET /x was not seen (${++built})`;
    for (let i = 0; i < 3; i++) limiter.warnOnce('TOLLGATE_ROUTE_NOT_SEEN', message);
    expect(warnings).toEqual(['[TOLLGATE_ROUTE_NOT_SEEN] @tollgate/test: route GET /x was not seen (1)']);
    expect(built).toBe(1);
    const off = createHttpLimiter({ logger, warnings: { TOLLGATE_ROUTE_NOT_SEEN: false } }, fakeAccess, {
      adapter: '@tollgate/test',
    });
    off.warnOnce('TOLLGATE_ROUTE_NOT_SEEN', message);
    expect(built).toBe(1);
  });
});

describe('endWithRejection', () => {
  it('ends the response with the status, the content type as it is, the length in bytes, and the body as text', () => {
    const written: unknown[] = [];
    const res = {
      statusCode: 200,
      setHeader: (name: string, value: string | number) => written.push([name, value]),
      end: (body: string) => written.push(body),
    };
    const body = '{"title":"Trop de requêtes"}';
    endWithRejection(res, {
      status: 429,
      contentType: 'application/problem+json',
      body,
      bytes: Buffer.from(body),
    });
    expect(res.statusCode).toBe(429);
    expect(written).toEqual([
      ['Content-Type', 'application/problem+json'],
      ['Content-Length', Buffer.byteLength(body)],
      body,
    ]);
  });
});

describe("the lifecycle's defaults", () => {
  it("puts the info on the request's own property, and hands the refused request's info to send", async () => {
    const { limiters } = routeLimiters({ limit: 1, window: '1m' });
    const handle = rateLimitLifecycle(
      limiters.appWide as HttpLimiter<FakeRequest, FakeResponse>,
      fakeResponses,
    );
    const first: FakeRequest & { rateLimit?: RateLimitInfo } = { ip: '203.0.113.7' };
    expect(await handle(first, new FakeResponse())).toEqual({ kind: 'next' });
    expect(first.rateLimit?.remaining).toBe(0);
    const response = new FakeResponse();
    const second: FakeRequest & { rateLimit?: RateLimitInfo } = { ip: '203.0.113.7' };
    expect(await handle(second, response)).toEqual({ kind: 'answered' });
    expect(response.sent).toHaveLength(1);
    expect(response.sent[0]?.info).toBe(second.rateLimit);
    expect(response.sent[0]?.rejection.status).toBe(429);
    expect(response.headers['retry-after']).toBeDefined();
  });

  it('stacks on the fields an earlier limiter left on the response, and puts nothing of its own on it', async () => {
    const { limiters } = routeLimiters({ limit: 5, window: '1m', headers: 'draft-6' });
    const lifecycleOf = (limiter: unknown) =>
      rateLimitLifecycle(limiter as HttpLimiter<FakeRequest, FakeResponse>, fakeResponses);
    const appWide = lifecycleOf(limiters.appWide);
    const search = lifecycleOf(limiters.ofRoute({ limit: 2, window: '1s', headers: 'draft-11' }, 'search'));
    const login = lifecycleOf(limiters.ofRoute({ limit: 1, window: '1m', headers: 'draft-11' }, 'login'));
    const response = new FakeResponse();
    const properties = Reflect.ownKeys(response);
    for (const handle of [appWide, search, login]) {
      expect(await handle({ ip: '203.0.113.7' }, response)).toEqual({ kind: 'next' });
    }
    // The app-wide draft-6 fields gave way to the routes' draft-11 lists, which hold both routes' members.
    expect(Object.keys(response.headers).sort()).toEqual(['ratelimit', 'ratelimit-policy']);
    expect(response.headers['ratelimit-policy']?.split(', ')).toHaveLength(2);
    expect(response.headers.ratelimit?.split(', ')).toHaveLength(2);
    expect(Reflect.ownKeys(response)).toEqual(properties);
  });

  it('gives a Web adapter the error to throw: the store’s, or one saying the request was answered already', () => {
    const error = new Error('store down');
    expect(handledError({ kind: 'error', error }, '@tollgate/test')).toBe(error);
    expect(String(handledError({ kind: 'stopped' }, '@tollgate/test'))).toBe(
      'Error: @tollgate/test: this request was answered already',
    );
  });
});

describe('createAdapterLimiter', () => {
  const platform = { requests: fakeAccess, responses: nodeResponses };
  const response = () => new ServerResponse(new IncomingMessage(new Socket()));

  it('gives the middleware its handle, the app’s handler and the key controls, from one call', async () => {
    const { store } = storeOnClock();
    const handler = (_req: FakeRequest, info: RateLimitInfo) => info.limit;
    const built = createAdapterLimiter<FakeRequest, ServerResponse, typeof handler>(
      { limit: 1, window: '1m', store, handler },
      platform,
      { adapter: '@tollgate/test' },
    );
    expect(built.handler).toBe(handler);
    const client = () => ({ ip: '203.0.113.7' }); // a request each time
    expect(await built.handle(client(), response())).toEqual({ kind: 'next' });
    expect((await built.handle(client(), response())).kind).toBe('handler');
    await built.controls.resetKey('ip:203.0.113.7');
    expect(await built.handle(client(), response())).toEqual({ kind: 'next' });
  });

  it('checks the options once, naming the adapter', () => {
    expect(() => createAdapterLimiter({ limit: -1 }, platform, { adapter: '@tollgate/test' })).toThrow(
      /^@tollgate\/test: limit /,
    );
  });
});
