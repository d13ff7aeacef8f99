/**
 * Prototype pollution elsewhere in an app (`Object.prototype.skip = …`, by some other library's bug)
 * must not switch Tollgate off: with every adapter, app-wide and route limiters still answer 429. The
 * names polluted are ones only Tollgate reads, so the frameworks themselves keep working.
 */
import { MemoryStore } from '@tollgate/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { LimiterOptions, TestApp } from './app-spec.js';
import { drivers } from './drivers.js';
import { nestDrivers } from './nestjs-drivers.js';
import { webDrivers } from './web-drivers.js';

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

/**
 * The statuses of `count` requests to `path`. No answer may carry a header named after a polluted
 * property: a header record read with `for…in` would pick it up from the prototype.
 */
async function statuses(app: TestApp, path: string, count: number): Promise<number[]> {
  const codes: number[] = [];
  for (let i = 0; i < count; i++) {
    const response = await app.send('GET', path);
    for (const name of polluted) expect(Object.hasOwn(response.headers, name.toLowerCase())).toBe(false);
    codes.push(response.status);
  }
  return codes;
}

describe.each([...drivers, ...webDrivers, ...nestDrivers])('$name', (driver) => {
  it.each(POLLUTIONS)('answers the 3rd request 429 with Object.prototype.%s set', async (name, value) => {
    pollute(name, value);
    const app = await driver.build({ global: twoPerMinute('polluted-app') });
    try {
      expect(await statuses(app, '/a', 3)).toEqual([200, 200, 429]);
    } finally {
      await app.close();
    }
  });

  it('takes an own option of a polluted name as given', async () => {
    // An adapter's list of the options it refuses must not gain names from the prototype either.
    pollute('skip', () => true);
    const app = await driver.build({ global: { ...twoPerMinute('own-skip'), skip: () => false } });
    try {
      expect(await statuses(app, '/a', 3)).toEqual([200, 200, 429]);
    } finally {
      await app.close();
    }
  });

  // Fastify: the route's `config.rateLimit`; NestJS: a handler's `@RateLimit`; the others: a limiter in the
  // route's middleware or around its handler.
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
