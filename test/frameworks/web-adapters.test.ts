/** The adapter scenario table × the Web-standard drivers (Hono, @tollgate/fetch) × both stores, Redis started by the harness. */
import { MemoryStore, RedisStore, type Store } from '@tollgate/core';
import type { Redis } from 'ioredis';
import { afterAll, describe, it } from 'vitest';
import { connectRedis, uniquePrefix } from '../harness/clients.js';
import { manualClock } from '../harness/manual-clock.js';
import type { AppSpec, LimiterDefaults, LimiterOptions } from './app-spec.js';
import { adapterScenarios, type ScenarioContext } from './scenarios.js';
import { settlingStore } from './settling-store.js';
import { webDrivers } from './web-drivers.js';

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
      const prefix = uniquePrefix('web-adapters');
      return {
        store: new RedisStore({ client: redis, prefix, clock }),
        storedKeys: () => redis.keys(`${prefix}*`),
      };
    },
  },
];

/**
 * Scenarios that cannot map onto a Web-standard adapter, each with the reason. Everything else runs.
 */
const NOT_APPLICABLE: Readonly<Record<string, string>> = {
  // The scenario also expects TOLLGATE_PERMISSIVE_TRUST_PROXY, which Express, Fastify and Koa raise when
  // their trust-proxy setting trusts every hop. Hono and the Fetch API have no such setting: the app's
  // own `ip` function reads X-Forwarded-For, and no adapter can tell from a function whether it trusts
  // every hop. The rest of the scenario (a bucket per forwarded client, no UNTRUSTED warning) is in
  // fetch.test.ts and hono.test.ts.
  'with trusted proxies, each forwarded client has its own bucket': 'no trust-proxy setting to warn about',
};

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

const scenarios = adapterScenarios.map((scenario) => ({
  ...scenario,
  skip: scenario.name in NOT_APPLICABLE,
}));

describe.each(webDrivers)('$name', (driver) => {
  describe.each(stores)('on $name', (storeSetup) => {
    for (const scenario of scenarios) {
      it.skipIf(scenario.skip)(scenario.name, async () => {
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
    }
  });
});
