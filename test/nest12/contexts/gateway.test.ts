/**
 * `TollgateGuard` in a WebSocket gateway (`@nestjs/platform-ws`), with real `ws` clients, on MemoryStore
 * and RedisStore: each message charged, keyed by the user the gateway set on the connection or by the
 * peer's address, refused with a `WsException` that Nest sends as an `exception` event.
 */

import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { APP_GUARD } from '@nestjs/core';
import { WsAdapter } from '@nestjs/platform-ws';
import { Test } from '@nestjs/testing';
import { type OnGatewayConnection, SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { MemoryStore, QUOTA_EXCEEDED_TYPE, RedisStore, type Store } from '@tollgate/core';
import {
  byUser,
  type NestWsRequest,
  RateLimit,
  SkipRateLimit,
  TollgateGuard,
  TollgateModule,
} from '@tollgate/nestjs';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { connectRedis, uniquePrefix } from '../../harness/clients.js';

const redis = await connectRedis();
afterAll(() => redis.disconnect());

const stores: [string, () => Store][] = [
  ['MemoryStore', () => new MemoryStore()],
  ['RedisStore', () => new RedisStore({ client: redis, prefix: uniquePrefix('nestjs-gateway') })],
];

/** A connection, with the user the gateway read from its upgrade request. */
type ChatClient = WebSocket & { user?: string };

@WebSocketGateway({ path: '/chat' })
class ChatGateway implements OnGatewayConnection {
  handleConnection(client: ChatClient, request: IncomingMessage) {
    const user = request.headers['x-user'];
    if (typeof user === 'string') client.user = user;
  }

  /** 2 an hour per user, across the user's connections. */
  @RateLimit({
    name: 'chat',
    limit: 2,
    window: '1h',
    key: byUser((req: NestWsRequest<unknown, ChatClient>) => req.client.user),
  })
  @SubscribeMessage('chat')
  chat() {
    return { event: 'chat', data: 'sent' };
  }

  /** The module's app-wide limiter: 3 an hour per peer address. */
  @SubscribeMessage('ping')
  ping() {
    return { event: 'pong', data: 'pong' };
  }

  @SkipRateLimit()
  @SubscribeMessage('health')
  health() {
    return { event: 'health', data: 'ok' };
  }
}

/** A `ws` client that reads the gateway's answers in order. */
class Client {
  readonly #messages: unknown[] = [];
  readonly #waiting: ((message: unknown) => void)[] = [];

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (raw) => {
      const message: unknown = JSON.parse(String(raw));
      const waiter = this.#waiting.shift();
      if (waiter) waiter(message);
      else this.#messages.push(message);
    });
  }

  static async open(url: string, headers: Record<string, string> = {}): Promise<Client> {
    const socket = new WebSocket(`${url}/chat`, { headers });
    await once(socket, 'open');
    return new Client(socket);
  }

  /** Sends `event` and resolves with the gateway's answer (its handler's, or an `exception` event). */
  ask(event: string): Promise<unknown> {
    this.socket.send(JSON.stringify({ event, data: {} }));
    const queued = this.#messages.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  close() {
    this.socket.close();
  }
}

function expectRefusal(answer: unknown, policy: string) {
  expect(answer).toMatchObject({
    event: 'exception',
    data: {
      code: 'TOLLGATE_RATE_LIMITED',
      message: expect.stringMatching(/^Too many requests: retry in \d+ seconds?\.$/),
      retryAfter: expect.any(Number),
      retryAfterMs: expect.any(Number),
      type: QUOTA_EXCEEDED_TYPE,
      status: 429,
      'violated-policies': [policy],
    },
  });
}

describe.each(stores)('WebSocket gateway on %s', (_name, makeStore) => {
  let url: string;
  let close: () => Promise<void>;
  const clients: Client[] = [];

  beforeEach(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [TollgateModule.forRoot({ name: 'site', limit: 3, window: '1h', store: makeStore() })],
      providers: [ChatGateway, { provide: APP_GUARD, useClass: TollgateGuard }],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    app.useWebSocketAdapter(new WsAdapter(app));
    await app.listen(0, '127.0.0.1');
    url = (await app.getUrl()).replace('http://[::1]', 'ws://127.0.0.1').replace('http', 'ws');
    close = () => app.close();
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await close();
  });

  async function open(headers?: Record<string, string>): Promise<Client> {
    const client = await Client.open(url, headers);
    clients.push(client);
    return client;
  }

  it("charges each message to its handler's limiter, keyed by the connection's user", async () => {
    const ann = await open({ 'x-user': 'ann' });
    const annAgain = await open({ 'x-user': 'ann' });
    const bob = await open({ 'x-user': 'bob' });
    expect(await ann.ask('chat')).toEqual({ event: 'chat', data: 'sent' });
    expect(await annAgain.ask('chat')).toEqual({ event: 'chat', data: 'sent' });
    // Ann's third message, on either connection, is over her limit; Bob's budget is his own.
    expectRefusal(await ann.ask('chat'), '2-per-1h');
    expectRefusal(await annAgain.ask('chat'), '2-per-1h');
    expect(await bob.ask('chat')).toEqual({ event: 'chat', data: 'sent' });
    // The refused connection stays open and usable.
    expect(await ann.ask('health')).toEqual({ event: 'health', data: 'ok' });
  });

  it("keys the app-wide limiter by the peer's address, and skips what @SkipRateLimit marks", async () => {
    const first = await open();
    const second = await open();
    expect(await first.ask('ping')).toEqual({ event: 'pong', data: 'pong' });
    expect(await second.ask('ping')).toEqual({ event: 'pong', data: 'pong' });
    expect(await first.ask('ping')).toEqual({ event: 'pong', data: 'pong' });
    expectRefusal(await second.ask('ping'), '3-per-1h'); // one address, one budget
    for (let i = 0; i < 5; i++) expect(await first.ask('health')).toEqual({ event: 'health', data: 'ok' });
  });
});
