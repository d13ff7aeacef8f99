/**
 * Dry run in every framework and on both stores: every request goes on, the buckets are charged exactly
 * as when enforcing (so an enforcing limiter that takes over sees the spent tokens), and the would-be
 * refusals published on tollgate:decision are as many as enforcing refuses for the same traffic.
 */
import { randomBytes } from 'node:crypto';
import {
  DECISION_CHANNEL,
  type DecisionEvent,
  MemoryStore,
  RedisStore,
  type Store,
  subscribeTollgate,
} from '@tollgate/core';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { connectRedis, uniquePrefix } from '../harness/clients.js';
import { manualClock } from '../harness/manual-clock.js';
import type { AppSpec, TestApp } from './app-spec.js';
import { drivers } from './drivers.js';
import { nestDrivers } from './nestjs-drivers.js';
import { draft10, retryAfterSeconds } from './parse-headers.js';
import { webDrivers } from './web-drivers.js';

const redis: Redis = await connectRedis();
afterAll(() => redis.disconnect());

const stores: { name: string; create(clock: () => number): Store }[] = [
  { name: 'MemoryStore', create: (clock) => new MemoryStore({ clock }) },
  {
    name: 'RedisStore',
    create: (clock) => new RedisStore({ client: redis, prefix: uniquePrefix('dry-run'), clock }),
  },
];

const decisions: DecisionEvent[] = [];
const stop = subscribeTollgate(DECISION_CHANNEL, (event) => decisions.push(event));
afterAll(stop);
afterEach(() => {
  decisions.length = 0;
});

const quiet = { warn: () => {}, error: () => {} };

/** The outcomes published for one limiter, counted. */
function outcomes(limiter: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const event of decisions) {
    if (event.limiter === limiter) counts[event.outcome] = (counts[event.outcome] ?? 0) + 1;
  }
  return counts;
}

/** The same traffic for every app: two clients, one of them bursting. */
async function traffic(app: TestApp): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < 7; i++) statuses.push((await app.send('GET', '/a', { 'x-user': 'bursty' })).status);
  for (let i = 0; i < 2; i++) statuses.push((await app.send('GET', '/b', { 'x-user': 'calm' })).status);
  return statuses;
}

describe.each([...drivers, ...webDrivers, ...nestDrivers])('$name', (driver) => {
  describe.each(stores)('on $name', (storeSetup) => {
    const limiterSpec = (store: Store, name: string, more: object = {}): AppSpec => ({
      global: {
        limit: 3,
        window: '1m',
        name,
        store,
        logger: quiet,
        key: (request: never) => `user:${driver.reader.header(request, 'x-user')}`,
        ...more,
      } as never,
    });

    it('lets every request go on without headers, and charges exactly: enforcing takes over where it left off', async () => {
      const store = storeSetup.create(manualClock().now);
      const name = `shadow-${randomBytes(4).toString('hex')}`;
      const shadow = await driver.build(limiterSpec(store, name, { dryRun: true }));
      try {
        const statuses = await traffic(shadow);
        expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200]);
        const answer = await shadow.send('GET', '/a', { 'x-user': 'bursty' });
        expect(answer.headers.ratelimit).toBeUndefined();
        expect(answer.headers['retry-after']).toBeUndefined();
      } finally {
        await shadow.close();
      }
      const enforcing = await driver.build(limiterSpec(store, name));
      try {
        expect((await enforcing.send('GET', '/a', { 'x-user': 'bursty' })).status).toBe(429);
        const calm = await enforcing.send('GET', '/a', { 'x-user': 'calm' });
        expect(calm.status).toBe(200);
        expect(draft10(calm, 'ratelimit')).toEqual({ '3-per-1m': { r: 0, t: 20 } }); // 2 spent in dry run
      } finally {
        await enforcing.close();
      }
    });

    it('counts as many would-be refusals as enforcing refuses for the same traffic', async () => {
      const clock = manualClock();
      const shadowName = `shadow-${randomBytes(4).toString('hex')}`;
      const enforcedName = `enforced-${randomBytes(4).toString('hex')}`;
      const shadow = await driver.build(
        limiterSpec(storeSetup.create(clock.now), shadowName, { dryRun: true }),
      );
      const enforced = await driver.build(limiterSpec(storeSetup.create(clock.now), enforcedName));
      try {
        await traffic(shadow);
        const refused = (await traffic(enforced)).filter((status) => status === 429).length;
        expect(refused).toBe(4);
        expect(outcomes(shadowName)).toEqual({ allowed: 5, 'dry-run-limited': 4 });
        expect(outcomes(enforcedName)).toEqual({ allowed: 5, limited: 4 });
      } finally {
        await shadow.close();
        await enforced.close();
      }
    });

    it('sends the headers enforcing would with dryRunHeaders, but no Retry-After', async () => {
      const store = storeSetup.create(manualClock().now);
      const app = await driver.build(
        limiterSpec(store, `headers-${randomBytes(4).toString('hex')}`, {
          dryRun: true,
          dryRunHeaders: true,
        }),
      );
      try {
        const statuses = await traffic(app);
        expect(statuses.every((status) => status === 200)).toBe(true);
        const wouldRefuse = await app.send('GET', '/a', { 'x-user': 'bursty' });
        expect(wouldRefuse.status).toBe(200);
        expect(draft10(wouldRefuse, 'ratelimit')).toEqual({ '3-per-1m': { r: 0, t: 20 } });
        expect(retryAfterSeconds(wouldRefuse)).toBeUndefined();
      } finally {
        await app.close();
      }
    });
  });
});
