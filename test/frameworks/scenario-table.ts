/** Runs the adapter scenario table over some framework drivers, on both stores, Redis started by the harness. */
import { MemoryStore, RedisStore, type Store } from '@tollgate/core';
import type { Redis } from 'ioredis';
import { afterAll, describe, it } from 'vitest';
import { connectRedis, uniquePrefix } from '../harness/clients.js';
import { manualClock } from '../harness/manual-clock.js';
import { manualSleeps } from '../harness/manual-sleeps.js';
import type { AppSpec, FrameworkDriver, LimiterDefaults, LimiterOptions } from './app-spec.js';
import { adapterScenarios, type ScenarioContext } from './scenarios.js';
import { settlingStore } from './settling-store.js';

interface StoreSetup {
  readonly name: string;
  create(clock: () => number): { store: Store; storedKeys?: () => Promise<string[]> };
}

function storeSetups(redis: Redis, prefix: string): StoreSetup[] {
  return [
    { name: 'MemoryStore', create: (clock) => ({ store: new MemoryStore({ clock }) }) },
    {
      name: 'RedisStore',
      create(clock) {
        const keyPrefix = uniquePrefix(prefix);
        return {
          store: new RedisStore({ client: redis, prefix: keyPrefix, clock }),
          storedKeys: () => redis.keys(`${keyPrefix}*`),
        };
      },
    },
  ];
}

/**
 * Gives every limiter of the spec the scenario's store and logger (unless it brings its own), and one
 * with `delay` the scenario's sleep: a wait passes only when the scenario wakes it.
 */
function withDefaults(spec: AppSpec, { sleep, ...defaults }: LimiterDefaults): AppSpec {
  const complete = ({ delay, ...options }: LimiterOptions): LimiterOptions => ({
    ...defaults,
    ...options,
    ...(delay ? { delay: { sleep, ...delay } } : {}),
  });
  return {
    ...spec,
    ...(spec.global ? { global: complete(spec.global) } : {}),
    routes: (spec.routes ?? []).map((route) =>
      route.limit ? { ...route, limit: complete(route.limit) } : route,
    ),
  };
}

/**
 * Every scenario × `drivers` × both stores. `notApplicable` names scenarios that cannot map onto these
 * drivers, each with its reason; they are reported as skipped, never silently left out.
 */
export async function runScenarioTable(
  drivers: readonly FrameworkDriver[],
  prefix: string,
  notApplicable: Readonly<Record<string, string>> = {},
): Promise<void> {
  const redis = await connectRedis();
  afterAll(() => redis.disconnect());
  const stores = storeSetups(redis, prefix);
  describe.each(drivers)('$name', (driver) => {
    describe.each(stores)('on $name', (storeSetup) => {
      for (const scenario of adapterScenarios) {
        it.skipIf(scenario.name in notApplicable)(scenario.name, async () => {
          const clock = manualClock();
          const sleeps = manualSleeps();
          const logged: string[] = [];
          const created = storeSetup.create(clock.now);
          const { store, idle } = settlingStore(created.store);
          const { storedKeys } = created;
          const logger = {
            warn: (line: string) => logged.push(line),
            error: (line: string) => logged.push(line),
          };
          const spec = withDefaults(scenario.spec(driver.reader), { store, logger, sleep: sleeps.sleep });
          const app = await driver.build(spec);
          try {
            const context: ScenarioContext = {
              clock,
              sleeps: sleeps.started,
              logged,
              idle,
              store,
              ...(storedKeys ? { storedKeys } : {}),
            };
            await scenario.run(app, context);
          } finally {
            await app.close();
          }
        });
      }
    });
  });
}
