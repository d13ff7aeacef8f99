/**
 * Client addresses as real frameworks resolve them behind a trusted proxy, in Express 4/5, Fastify 4/5,
 * Koa 2/3, NestJS on both platforms, Hono and @tollgate/fetch (whose `ip` function reads the header):
 * forwarded values with a port or brackets, NAT64 clients, values that are not IPs, and CIDR entries of
 * `allowList`. Regression tests for "distinct clients share one bucket", "allowList entries that do not
 * mean what they look like" and "an unreadable client address is not reported with the default key".
 */
import { byIp, byUser, firstOf, MemoryStore } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { manualClock } from '../harness/manual-clock.js';
import type { LimiterOptions, TestApp } from './app-spec.js';
import { drivers } from './drivers.js';
import { nestDrivers } from './nestjs-drivers.js';
import { webDrivers } from './web-drivers.js';

interface AddressScenario {
  readonly name: string;
  readonly limiter: LimiterOptions;
  run(
    from: (forwardedFor: string) => Promise<number>,
    app: TestApp,
    logged: readonly string[],
  ): Promise<void>;
}

/** The lines logged under `code`. */
function linesOf(logged: readonly string[], code: string): string[] {
  return logged.filter((line) => line.startsWith(`[${code}]`));
}

const scenarios: AddressScenario[] = [
  {
    name: 'a forwarded port or brackets do not make another client',
    limiter: { limit: 1, window: '1h' },
    async run(from) {
      expect(await from('203.0.113.5')).toBe(200);
      expect(await from('203.0.113.5:51234')).toBe(429); // as Azure Application Gateway forwards it
      expect(await from('[2001:db8::1]:443')).toBe(200);
      expect(await from('2001:db8::1')).toBe(429);
      expect(await from('[2001:db8::2]')).toBe(429); // the same /56
    },
  },
  {
    name: 'two clients behind one NAT64 gateway have two buckets, each its IPv4 one',
    limiter: { limit: 1, window: '1h' },
    async run(from) {
      expect(await from('64:ff9b::c000:201')).toBe(200);
      expect(await from('64:ff9b::c000:202')).toBe(200);
      expect(await from('64:ff9b::c000:201')).toBe(429);
      expect(await from('192.0.2.2')).toBe(429); // the same client, not translated
    },
  },
  {
    name: 'NAT64 addresses with the IPv4 client written dotted are that client: 64:ff9b::1.2.3.4 is 1.2.3.4',
    limiter: { limit: 1, window: '1h' },
    async run(from, _app, logged) {
      expect(await from('64:ff9b::1.2.3.4')).toBe(200);
      expect(await from('1.2.3.4')).toBe(429);
      expect(await from('64:ff9b::102:304')).toBe(429); // the same address, written in hex
      expect(await from('64:ff9b::1.2.3.5')).toBe(200); // its neighbour is another client
      expect(linesOf(logged, 'TOLLGATE_UNPARSED_IP')).toEqual([]);
    },
  },
  {
    name: 'an unreadable client address is reported with the default key, once, in a bucket of its own',
    limiter: { limit: 1, window: '1h' },
    async run(from, _app, logged) {
      expect(await from('unknown')).toBe(200);
      expect(await from('unknown')).toBe(429);
      expect(await from('203.0.113.5')).toBe(200); // not pooled with a readable client
      expect(await from('obfuscated-7')).toBe(200);
      expect(linesOf(logged, 'TOLLGATE_UNPARSED_IP')).toHaveLength(1);
    },
  },
  {
    name: 'an unreadable client address is reported with key: byIp() and with byIp() last in a firstOf',
    limiter: {
      limit: 1,
      window: '1h',
      key: firstOf(
        byUser(() => undefined),
        byIp(),
      ),
    },
    async run(from, _app, logged) {
      expect(await from('unknown')).toBe(200);
      expect(await from('unknown')).toBe(429);
      expect(linesOf(logged, 'TOLLGATE_UNPARSED_IP')).toHaveLength(1);
    },
  },
  {
    name: 'forwarded values that are not IPs get a bucket each, by default',
    limiter: { limit: 1, window: '1h' },
    async run(from) {
      expect(await from('garbage-1')).toBe(200);
      expect(await from('garbage-1')).toBe(429);
      expect(await from('garbage-2')).toBe(200); // not refused for garbage-1's use
      expect(await from('garbage-2')).toBe(429);
    },
  },
  {
    name: 'forwarded values that are not IPs get a bucket each, with key: byIp()',
    limiter: { limit: 1, window: '1h', key: byIp() },
    async run(from) {
      expect(await from('garbage-1')).toBe(200);
      expect(await from('garbage-1')).toBe(429);
      expect(await from('garbage-2')).toBe(200);
    },
  },
  {
    name: 'a CIDR allowList entry exempts the clients in its range, and only those',
    limiter: { limit: 1, window: '1h', allowList: ['203.0.113.0/24'] },
    async run(from, app) {
      for (let i = 0; i < 3; i++) expect(await from('203.0.113.9')).toBe(200);
      const exempt = await app.send('GET', '/a', { 'x-forwarded-for': '203.0.113.200:4000' });
      expect(exempt.status).toBe(200);
      expect(exempt.headers.ratelimit).toBeUndefined(); // allow-listed: no rate-limit headers
      const charged = await app.send('GET', '/a', { 'x-forwarded-for': '198.51.100.1' });
      expect(charged.status).toBe(200);
      expect(charged.headers.ratelimit).toBeDefined();
      expect(await from('198.51.100.1')).toBe(429);
    },
  },
];

describe.each([...drivers, ...nestDrivers, ...webDrivers])('$name behind a trusted proxy', (driver) => {
  it.each(scenarios)('$name', async (scenario) => {
    const clock = manualClock();
    const logged: string[] = [];
    const logger = { warn: (line: string) => logged.push(line), error: (line: string) => logged.push(line) };
    const store = new MemoryStore({ clock: clock.now });
    const app = await driver.build({ trustProxy: true, global: { store, logger, ...scenario.limiter } });
    try {
      const from = async (forwardedFor: string) =>
        (await app.send('GET', '/a', { 'x-forwarded-for': forwardedFor })).status;
      await scenario.run(from, app, logged);
    } finally {
      await app.close();
    }
  });
});
