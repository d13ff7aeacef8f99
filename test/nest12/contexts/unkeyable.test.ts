/**
 * Calls the guard cannot key, handed to it as Nest hands them (Nest's own `ExecutionContextHost`): a
 * clear `ClientAddressError` rather than a crash or one bucket for all, and a context of a type of its
 * own let through.
 */
import type { ExecutionContext } from '@nestjs/common';
import { ExecutionContextHost } from '@nestjs/core/internal';
import { Test } from '@nestjs/testing';
import { ClientAddressError } from '@tollgate/core';
import {
  type NestRpcRequest,
  TollgateGuard,
  TollgateModule,
  type TollgateModuleOptions,
} from '@tollgate/nestjs';
import { describe, expect, it } from 'vitest';

class Handlers {
  handle() {}
}

async function guardOf<Req>(options: TollgateModuleOptions<Req>): Promise<TollgateGuard> {
  const moduleRef = await Test.createTestingModule({
    imports: [TollgateModule.forRoot(options)],
    providers: [TollgateGuard],
  }).compile();
  await moduleRef.init();
  return moduleRef.get(TollgateGuard);
}

function contextOf(type: string, args: unknown[]): ExecutionContext {
  const context = new ExecutionContextHost(args, Handlers, Handlers.prototype.handle);
  context.setType(type);
  return context;
}

/** A microservice message on a transport that gives no address (Redis, NATS, …): `[data, context]`. */
const redisMessage = () => contextOf('rpc', [{ tenant: 'acme' }, { getChannel: () => 'report' }]);

describe('calls the guard cannot key', () => {
  it('refuses a microservice message without an address or a key with a ClientAddressError', async () => {
    const guard = await guardOf({ limit: 5, window: '1m' });
    const error = await guard.canActivate(redisMessage()).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ClientAddressError);
    expect(error).toMatchObject({ code: 'TOLLGATE_NO_CLIENT_ADDRESS' });
  });

  it('keys such a message by its payload when the key function says so', async () => {
    const guard = await guardOf({
      limit: 1,
      window: '1m',
      key: (req: NestRpcRequest<{ tenant: string }>) => `tenant:${req.data.tenant}`,
    });
    expect(await guard.canActivate(redisMessage())).toBe(true);
    await expect(guard.canActivate(redisMessage())).rejects.toMatchObject({
      error: { code: 'TOLLGATE_RATE_LIMITED', 'violated-policies': ['1-per-1m'] },
    });
  });

  it('refuses a GraphQL call whose context holds no request with a ClientAddressError', async () => {
    const guard = await guardOf({ limit: 5, window: '1m' });
    const call = contextOf('graphql', [undefined, {}, { user: 'ann' }, {}]);
    const error = await guard.canActivate(call).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ClientAddressError);
    expect((error as Error).message).toMatch(/holds no request/);
  });

  it('lets a context of a type of its own through, unlimited', async () => {
    const guard = await guardOf({ limit: 0, window: '1m' });
    expect(await guard.canActivate(contextOf('custom-transport', []))).toBe(true);
    await expect(guard.canActivate(redisMessage())).rejects.toBeInstanceOf(ClientAddressError);
  });
});
