import { afterAll, describe, it } from 'vitest';
import { limiterFor, scenarios } from './scenarios.js';
import { memoryKind, redisKind, type StoreKind } from './store-fixtures.js';

const kinds: StoreKind[] = [
  memoryKind(),
  await redisKind('RedisStore'),
  await redisKind('RedisStore on Cluster'),
];

afterAll(async () => {
  await Promise.all(kinds.map((kind) => kind.close()));
});

describe.each(kinds)('$name conformance', (kind) => {
  it.each(scenarios)('$name', async (scenario) => {
    const fixture = kind.fixture();
    await scenario.run(limiterFor(scenario, fixture), fixture);
  });
});
