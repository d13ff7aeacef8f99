import { afterAll, describe, it } from 'vitest';
import { NODE_REDIS_MAJORS } from '../harness/clients.js';
import { banScenarios } from './ban-scenarios.js';
import { leaseScenarios } from './lease-scenarios.js';
import { limiterFor, scenarios } from './scenarios.js';
import { memoryKind, redisKind, type StoreKind } from './store-fixtures.js';
import { windowScenarios } from './window-scenarios.js';

const kinds: StoreKind[] = [
  memoryKind(),
  await redisKind('Redis'),
  await redisKind('Cluster'),
  ...(await Promise.all(
    NODE_REDIS_MAJORS.flatMap((major) => [
      redisKind('Redis', `node-redis ${major}`),
      redisKind('Cluster', `node-redis ${major}`),
    ]),
  )),
];

afterAll(async () => {
  await Promise.all(kinds.map((kind) => kind.close()));
});

describe.each(kinds)('$name conformance', (kind) => {
  it.each([...scenarios, ...windowScenarios, ...banScenarios])('$name', async (scenario) => {
    const fixture = kind.fixture();
    await scenario.run(limiterFor(scenario, fixture), fixture);
  });
});

describe.each(kinds)('$name leases', (kind) => {
  it.each(leaseScenarios)('$name', async (scenario) => {
    await scenario.run(kind.fixture());
  });
});
