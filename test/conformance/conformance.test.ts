import { afterAll, describe, it } from 'vitest';
import { CLIENT_NAMES } from '../harness/clients.js';
import { banScenarios } from './ban-scenarios.js';
import { leaseScenarios } from './lease-scenarios.js';
import { overrideScenarios } from './override-scenarios.js';
import { penaltyScenarios } from './penalty-scenarios.js';
import { refundScenarios } from './refund-scenarios.js';
import { reservationScenarios } from './reservation-scenarios.js';
import { limiterFor, scenarios } from './scenarios.js';
import { memoryKind, redisKind, type StoreKind } from './store-fixtures.js';
import { waitScenarios } from './wait-scenarios.js';
import { windowScenarios } from './window-scenarios.js';

/** The memory store, and a Redis store on Redis and on Cluster through every client library. */
const kinds: StoreKind[] = [
  memoryKind(),
  ...(await Promise.all(
    CLIENT_NAMES.flatMap((client) => [redisKind('Redis', client), redisKind('Cluster', client)]),
  )),
];

afterAll(async () => {
  await Promise.all(kinds.map((kind) => kind.close()));
});

describe.each(kinds)('$name conformance', (kind) => {
  it.each([
    ...scenarios,
    ...windowScenarios,
    ...banScenarios,
    ...penaltyScenarios,
    ...refundScenarios,
    ...overrideScenarios,
    ...waitScenarios,
    ...reservationScenarios,
  ])('$name', async (scenario) => {
    const fixture = kind.fixture();
    await scenario.run(limiterFor(scenario, fixture), fixture);
  });
});

describe.each(kinds)('$name leases', (kind) => {
  it.each(leaseScenarios)('$name', async (scenario) => {
    await scenario.run(kind.fixture());
  });
});
