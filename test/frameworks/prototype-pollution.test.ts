/**
 * Prototype pollution elsewhere in an app (`Object.prototype.skip = …`, by some other library's bug)
 * must not switch Tollgate off: on every framework, app-wide and route limiters still answer 429. The
 * names polluted are ones only Tollgate reads, so the frameworks themselves keep working.
 */
import { MemoryStore } from '@tollgate/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { LimiterOptions, TestApp } from './app-spec.js';
import { drivers } from './drivers.js';

const polluted: string[] = [];

/** Puts `name` on `Object.prototype` until the test ends, as a prototype-pollution bug would. */
function pollute(name: string, value: unknown): void {
  (Object.prototype as Record<string, unknown>)[name] = value;
  polluted.push(name);
}

afterEach(() => {
  for (const name of polluted.splice(0)) delete (Object.prototype as Record<string, unknown>)[name];
});

/** Each would let every request through if Tollgate read it from the prototype. */
const POLLUTIONS: readonly (readonly [string, unknown])[] = [
  ['skip', () => true],
  ['dryRun', true],
  ['allowList', () => true],
];

/** 2 per minute in a store of the test's own, logging nowhere. */
function twoPerMinute(name: string): LimiterOptions {
  return { limit: 2, window: '1m', name, store: new MemoryStore(), logger: { warn() {}, error() {} } };
}

async function statuses(app: TestApp, path: string, count: number): Promise<number[]> {
  const codes: number[] = [];
  for (let i = 0; i < count; i++) codes.push((await app.send('GET', path)).status);
  return codes;
}

describe.each(drivers)('$name', (driver) => {
  it.each(POLLUTIONS)('answers the 3rd request 429 with Object.prototype.%s set', async (name, value) => {
    pollute(name, value);
    const app = await driver.build({ global: twoPerMinute('polluted-app') });
    try {
      expect(await statuses(app, '/a', 3)).toEqual([200, 200, 429]);
    } finally {
      await app.close();
    }
  });

  // Fastify: the route's `config.rateLimit`; Express and Koa: a limiter in the route's middleware.
  it.each(POLLUTIONS)('limits a route of its own with Object.prototype.%s set', async (name, value) => {
    pollute(name, value);
    const app = await driver.build({
      routes: [{ method: 'GET', path: '/own', limit: twoPerMinute('polluted-route') }],
    });
    try {
      expect(await statuses(app, '/own', 3)).toEqual([200, 200, 429]);
    } finally {
      await app.close();
    }
  });
});

describe.each(drivers.filter((driver) => driver.name.startsWith('Fastify')))('$name', (driver) => {
  it("keeps the plugin's policies under a route's config.rateLimit with Object.prototype.algorithm set", async () => {
    // A route's own `algorithm` would replace the plugin's policies: one on the prototype must not.
    pollute('algorithm', 'fixed-window');
    const { limit: _limit, window: _window, ...rest } = twoPerMinute('plugin');
    const plugin = { ...rest, global: false, policies: { limit: 2, window: '1m' } } as LimiterOptions;
    const app = await driver.build({
      global: plugin,
      routes: [{ method: 'GET', path: '/own', limit: { name: 'inherits' } }],
    });
    try {
      expect(await statuses(app, '/own', 3)).toEqual([200, 200, 429]);
    } finally {
      await app.close();
    }
  });
});
