/**
 * RedisStore over TLS (the global setup's TLS Redis, with a certificate the run made): concurrent checks
 * through ioredis and node-redis 4 and 5 clients, each verifying the server against the test CA, admit
 * exactly the limit.
 */
import { createLimiter, type RedisClientLike, RedisStore } from '@tollgate/core';
import { Redis } from 'ioredis';
import { createClient as createClient4 } from 'redis4';
import { createClient as createClient5 } from 'redis5';
import { describe, expect, inject, it } from 'vitest';
import { FAIL_FAST, uniquePrefix, untilReady } from '../harness/clients.js';

const tls = inject('redisTls');
const server = 'unavailable' in tls ? undefined : tls;
if (server === undefined)
  console.warn(`Skipping the TLS tests: ${(tls as { unavailable: string }).unavailable}`);

/** A client of the TLS Redis, connected, and how to close it. */
type Connect = (address: { host: string; port: number; ca: string }) => Promise<{
  client: RedisClientLike;
  close(): Promise<void>;
}>;

const CLIENTS: readonly (readonly [string, Connect])[] = [
  [
    'ioredis',
    async ({ host, port, ca }) => {
      const client = new Redis({ host, port, tls: { ca }, ...FAIL_FAST });
      client.on('error', () => {});
      await untilReady(client);
      return { client, close: async () => client.disconnect() };
    },
  ],
  ...([4, 5] as const).map(
    (major) =>
      [
        `node-redis ${major}`,
        async ({ host, port, ca }: { host: string; port: number; ca: string }) => {
          const options = { socket: { host, port, tls: true as const, ca }, disableOfflineQueue: true };
          const client = major === 4 ? createClient4(options) : createClient5(options);
          client.on('error', () => {});
          await client.connect();
          return { client, close: () => client.disconnect() };
        },
      ] as const,
  ),
];

describe.skipIf(server === undefined)('RedisStore over TLS', () => {
  it('verifies the server: a client not given the CA is refused', async () => {
    const { host, port } = server as { host: string; port: number };
    const untrusted = new Redis({ host, port, tls: {}, ...FAIL_FAST, lazyConnect: true });
    const failure = new Promise<Error>((resolve) => untrusted.once('error', resolve));
    untrusted.connect().catch(() => {});
    expect((await failure).message).toMatch(/certificate/);
    untrusted.disconnect();
  });

  it('600 concurrent checks from ioredis, node-redis 4 and node-redis 5 clients on one key admit exactly 100', async () => {
    const prefix = uniquePrefix('tls');
    const connections = await Promise.all(CLIENTS.map(([, connect]) => connect(server as never)));
    try {
      const limiters = connections.map(({ client }) =>
        createLimiter({
          store: new RedisStore({ client, prefix }),
          policies: { limit: 100, window: '1h' },
          onStoreError: 'throw', // a store failure must fail the race, not be decided in process
        }),
      );
      const decisions = await Promise.all(
        limiters.flatMap((limiter) => Array.from({ length: 200 }, () => limiter.consume('shared-key'))),
      );
      expect(decisions.filter((d) => d.allowed)).toHaveLength(100);
    } finally {
      await Promise.all(connections.map(({ close }) => close()));
    }
  });
});
