/**
 * `TollgateGuard` in a TCP microservice, called through a real `ClientProxy`, on MemoryStore and
 * RedisStore: `@MessagePattern` messages keyed by their payload or by the caller's address, refused with
 * an `RpcException` whose error reaches the caller; `@EventPattern` events dropped over their limit.
 */
import { Controller, type INestMicroservice } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import {
  ClientProxyFactory,
  type ClientTCP,
  EventPattern,
  MessagePattern,
  Transport,
} from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { MemoryStore, QUOTA_EXCEEDED_TYPE, RedisStore, type Store } from '@tollgate/core';
import { type NestRpcRequest, RateLimit, TollgateGuard, TollgateModule } from '@tollgate/nestjs';
import { firstValueFrom } from 'rxjs';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { until } from '../../frameworks/lifecycle-sockets.js';
import { connectRedis, uniquePrefix } from '../../harness/clients.js';
import { freePort } from '../../harness/redis-server.js';

const redis = await connectRedis();
afterAll(() => redis.disconnect());

const stores: [string, () => Store][] = [
  ['MemoryStore', () => new MemoryStore()],
  ['RedisStore', () => new RedisStore({ client: redis, prefix: uniquePrefix('nestjs-rpc') })],
];

/** The events the service handled, and those it refused. */
const audited: unknown[] = [];
let refusedEvents = 0;

@Controller()
class ReportsController {
  /** 2 an hour per tenant, read from the payload. */
  @RateLimit({
    name: 'report',
    limit: 2,
    window: '1h',
    key: (req: NestRpcRequest<{ tenant: string }>) => `tenant:${req.data.tenant}`,
  })
  @MessagePattern('report')
  report() {
    return 'done';
  }

  /** The module's app-wide limiter, 3 an hour per calling address. */
  @MessagePattern('sum')
  sum() {
    return 6;
  }

  @RateLimit({ name: 'audit', limit: 1, window: '1h', onExceeded: () => void refusedEvents++ })
  @EventPattern('audit')
  audit(data: unknown) {
    audited.push(data);
  }
}

async function refusalOf(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (error) {
    return error;
  }
  throw new Error('expected a refusal');
}

function expectRefusal(error: unknown, policy: string) {
  expect(error).toMatchObject({
    code: 'TOLLGATE_RATE_LIMITED',
    message: expect.stringMatching(/^Too many requests: retry in \d+ seconds?\.$/),
    retryAfter: expect.any(Number),
    retryAfterMs: expect.any(Number),
    type: QUOTA_EXCEEDED_TYPE,
    status: 429,
    'violated-policies': [policy],
  });
}

describe.each(stores)('TCP microservice on %s', (_name, makeStore) => {
  let service: INestMicroservice;
  let client: ClientTCP;

  beforeEach(async () => {
    const port = await freePort();
    const moduleRef = await Test.createTestingModule({
      imports: [TollgateModule.forRoot({ name: 'site', limit: 3, window: '1h', store: makeStore() })],
      controllers: [ReportsController],
      providers: [{ provide: APP_GUARD, useClass: TollgateGuard }],
    }).compile();
    service = moduleRef.createNestMicroservice({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port },
      logger: false,
    });
    await service.listen();
    client = ClientProxyFactory.create({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port },
    }) as ClientTCP;
    await client.connect();
    audited.length = 0;
    refusedEvents = 0;
  });
  afterEach(async () => {
    await client.close();
    await service.close();
  });

  const send = (pattern: string, data: unknown) => firstValueFrom(client.send(pattern, data));

  it('charges each message to its limiter, keyed by the payload, and refuses with an RpcException', async () => {
    expect(await send('report', { tenant: 'acme' })).toBe('done');
    expect(await send('report', { tenant: 'acme' })).toBe('done');
    expectRefusal(await refusalOf(send('report', { tenant: 'acme' })), '2-per-1h');
    expect(await send('report', { tenant: 'globex' })).toBe('done');
  });

  it("keys the app-wide limiter by the caller's address", async () => {
    for (let i = 0; i < 3; i++) expect(await send('sum', [1, 2, 3])).toBe(6);
    expectRefusal(await refusalOf(send('sum', [1, 2, 3])), '3-per-1h');
  });

  it('drops events over their limit', async () => {
    for (const n of [1, 2, 3]) await firstValueFrom(client.emit('audit', n));
    await until(() => audited.length + refusedEvents === 3, 'the service took the three events');
    expect(audited).toEqual([1]);
    expect(refusedEvents).toBe(2);
  });
});
