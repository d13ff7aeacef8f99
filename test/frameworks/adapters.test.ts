/** The adapter scenario table × every framework driver × both stores, Redis started by the harness. */
import { MemoryStore, RedisStore, type Store } from '@tollgate/core';
import type { Redis } from 'ioredis';
import { afterAll, describe, it } from 'vitest';
import { connectRedis, uniquePrefix } from '../harness/clients.js';
import { manualClock } from '../harness/manual-clock.js';
import type { AppSpec, LimiterDefaults, LimiterOptions } from './app-spec.js';
import { drivers } from './drivers.js';
import { adapterScenarios, type ScenarioContext } from './scenarios.js';
import { settlingStore } from './settling-store.js';

const redis: Redis = await connectRedis();
afterAll(() => redis.disconnect());

interface StoreSetup {
  readonly name: string;
  create(clock: () => number): { store: Store; storedKeys?: () => Promise<string[]> };
}

const stores: StoreSetup[] = [
  { name: 'MemoryStore', create: (clock) => ({ store: new MemoryStore({ clock }) }) },
  {
    name: 'RedisStore',
    create(clock) {
      const prefix = uniquePrefix('adapters');
      return {
        store: new RedisStore({ client: redis, prefix, clock }),
        storedKeys: () => redis.keys(`${prefix}*`),
      };
    },
  },
];

/** Gives every limiter of the spec the scenario's store and logger (unless it brings its own). */
function withDefaults(spec: AppSpec, defaults: LimiterDefaults): AppSpec {
  const complete = (options: LimiterOptions): LimiterOptions => ({ ...defaults, ...options });
  return {
    ...spec,
    ...(spec.global ? { global: complete(spec.global) } : {}),
    routes: (spec.routes ?? []).map((route) =>
      route.limit ? { ...route, limit: complete(route.limit) } : route,
    ),
  };
}

describe.each(drivers)('$name', (driver) => {
  describe.each(stores)('on $name', (storeSetup) => {
    it.each(adapterScenarios)('$name', async (scenario) => {
      const clock = manualClock();
      const logged: string[] = [];
      const created = storeSetup.create(clock.now);
      const { store, idle } = settlingStore(created.store);
      const { storedKeys } = created;
      const logger = {
        warn: (line: string) => logged.push(line),
        error: (line: string) => logged.push(line),
      };
      const app = await driver.build(withDefaults(scenario.spec(driver.reader), { store, logger }));
      try {
        const context: ScenarioContext = { clock, logged, idle, ...(storedKeys ? { storedKeys } : {}) };
        await scenario.run(app, context);
      } finally {
        await app.close();
      }
    });
  });
});
