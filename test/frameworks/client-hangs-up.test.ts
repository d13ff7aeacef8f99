/**
 * A client that hangs up before or while the limiter runs: its lease never outlives it, it is not
 * charged to a bucket another client shares, and its handler does not run. On every framework, both stores.
 */
import type { ServerResponse } from 'node:http';
import { type LeaseRequest, MemoryStore, RedisStore, type Store } from '@tollgate/core';
import { afterAll, describe, expect, it } from 'vitest';
import { connectRedis, uniquePrefix } from '../harness/clients.js';
import { type BeforeLimiter, lifecycleFrameworks } from './lifecycle-apps.js';
import { close, listen, send, until } from './lifecycle-sockets.js';

const redis = await connectRedis();
afterAll(() => redis.disconnect());

const stores: [string, (name: string) => Store][] = [
  ['MemoryStore', () => new MemoryStore()],
  ['RedisStore', (name) => new RedisStore({ client: redis, prefix: uniquePrefix(name) })],
];

/** The app's step before the limiter: an `x-hang-up` request waits there until its client has gone. */
function authStep() {
  const counts = { arrived: 0, passed: 0, closed: 0 };
  const before: BeforeLimiter = async (req, res) => {
    res.once('close', () => counts.closed++);
    if (req.headers['x-hang-up'] !== undefined) {
      counts.arrived++;
      await closed(res);
    }
    counts.passed++;
  };
  return { counts, before };
}

function closed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => (res.closed ? resolve() : res.once('close', () => resolve())));
}

/** A store whose lease operations are counted, and whose acquires can be held at the door. */
function watchedStore(inner: Store) {
  const watch = { inFlight: 0, waiting: 0, held: false, open: () => {} };
  let gate = Promise.resolve();
  const store: Store = {
    update: (request) => inner.update(request),
    reset: (key, policies) => inner.reset(key, policies),
    ...(inner.local !== undefined ? { local: inner.local } : {}),
    ...(inner.enforcesTimeout !== undefined ? { enforcesTimeout: inner.enforcesTimeout } : {}),
    async lease(request: LeaseRequest) {
      watch.inFlight++;
      try {
        if (request.mode === 'acquire' && watch.held) {
          watch.waiting++;
          await gate;
        }
        return await (inner.lease as NonNullable<Store['lease']>)(request);
      } finally {
        watch.inFlight--;
      }
    },
  };
  const holdAcquires = () => {
    watch.held = true;
    gate = new Promise((resolve) => {
      watch.open = () => {
        watch.held = false;
        resolve();
      };
    });
  };
  return { store, watch, holdAcquires };
}

const byUser = (req: { headers: Record<string, unknown> }) => `user:${String(req.headers['x-user'])}`;

describe.each(lifecycleFrameworks)('%s', (_framework, build) => {
  describe.each(stores)('on %s', (storeName, makeStore) => {
    it('gives back no lease late: two clients that hung up before the limiter do not lock a user out', async () => {
      const { store, watch } = watchedStore(makeStore('hang-up-before'));
      const { counts, before } = authStep();
      const key = (req: never) => byUser(req as unknown as { headers: Record<string, unknown> });
      const options = { limit: 2, store, key, leaseTtl: '1h', name: 'uploads' };
      const app = await build(before, { kind: 'concurrency', options: options as never });
      const server = await listen(app.listener);
      try {
        const gone = [
          send(server, { 'x-user': '1', 'x-hang-up': '1' }),
          send(server, { 'x-user': '1', 'x-hang-up': '1' }),
        ];
        await until(() => counts.arrived === 2, 'both requests reached the auth step');
        for (const request of gone) request.abort();
        await until(() => counts.passed === 2 && watch.inFlight === 0, 'both went past the limiter');
        expect(await send(server, { 'x-user': '1' }).status).toBe(200);
        expect(app.handled()).toBe(1);
      } finally {
        await close(server);
      }
    });

    it(`releases at once a lease acquired for a client that hung up during the acquire (${storeName})`, async () => {
      const { store, watch, holdAcquires } = watchedStore(makeStore('hang-up-during'));
      const { counts, before } = authStep();
      const key = (req: never) => byUser(req as unknown as { headers: Record<string, unknown> });
      const options = { limit: 2, store, key, leaseTtl: '1h', name: 'uploads' };
      const app = await build(before, { kind: 'concurrency', options: options as never });
      const server = await listen(app.listener);
      try {
        holdAcquires();
        const gone = [send(server, { 'x-user': '2' }), send(server, { 'x-user': '2' })];
        await until(() => watch.waiting === 2, 'both acquires reached the store');
        for (const request of gone) request.abort();
        await until(() => counts.closed === 2, 'the server saw both clients go');
        watch.open();
        // Both leases were taken for clients already gone: each is released at once, none waits for its TTL.
        await until(() => watch.inFlight === 0, 'the acquires and their releases finished');
        const next = [send(server, { 'x-user': '2' }), send(server, { 'x-user': '2' })];
        expect(await Promise.all(next.map((request) => request.status))).toEqual([200, 200]);
        expect(app.handled()).toBe(2);
      } finally {
        watch.open();
        await close(server);
      }
    });

    it('neither charges nor serves requests whose client hung up before the limiter (SMS sent: exactly the limit)', async () => {
      const { counts, before } = authStep();
      const options = { limit: 3, window: '1h', store: makeStore('sms'), name: 'sms' };
      const app = await build(before, { kind: 'rate', options: options as never });
      const server = await listen(app.listener);
      try {
        const gone = [1, 2, 3].map(() => send(server, { 'x-hang-up': '1' }));
        await until(() => counts.arrived === 3, 'the requests reached the auth step');
        for (const request of gone) request.abort();
        await until(() => counts.passed === 3, 'they went past the auth step');
        const statuses: number[] = [];
        for (let i = 0; i < 4; i++) statuses.push(await send(server).status);
        expect(statuses).toEqual([200, 200, 200, 429]);
        expect(app.handled()).toBe(3);
      } finally {
        await close(server);
      }
    });
  });
});
