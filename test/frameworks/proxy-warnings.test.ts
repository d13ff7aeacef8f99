/**
 * The warnings about the client IP name the setting of the adapter in use, in its own words, and no other
 * framework's: Express's `app.set('trust proxy', …)`, Fastify's `trustProxy`, Koa's `app.proxy`, NestJS's
 * platform setting, and the `ip` option of Hono and @tollgate/fetch. Regression test for "warnings that
 * speak of the wrong framework" (Hono was told to set Express 'trust proxy', Fastify trustProxy or Koa
 * app.proxy).
 */
import { MemoryStore } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { manualClock } from '../harness/manual-clock.js';
import type { FrameworkDriver } from './app-spec.js';
import { drivers } from './drivers.js';
import { nestDrivers } from './nestjs-drivers.js';
import { webDrivers } from './web-drivers.js';

/**
 * Each framework's words for its setting: a warning of its own names the first; another framework's
 * warning says none of them.
 */
const MARKS = {
  express: ["'trust proxy'", 'Express'],
  fastify: ['trustProxy', 'Fastify'],
  koa: ['app.proxy', 'maxIpsCount', 'Koa'],
  hono: ['getConnInfo', 'Hono'],
  ipOption: ['the ip option'],
} as const;

type Mark = keyof typeof MARKS;

/** The marks a driver's warnings must carry; every other mark is another framework's. */
function ownMarks(driver: FrameworkDriver): readonly Mark[] {
  if (driver.name.startsWith('NestJS')) return ['express', 'fastify'];
  if (driver.name.startsWith('Express')) return ['express'];
  if (driver.name.startsWith('Fastify')) return ['fastify'];
  if (driver.name.startsWith('Koa')) return ['koa'];
  if (driver.name.startsWith('Hono')) return ['ipOption', 'hono'];
  return ['ipOption'];
}

/** The lines logged by an app built for `trustProxy`, sent `GET /a` from behind each `forwardedFor`. */
async function logOf(
  driver: FrameworkDriver,
  trustProxy: boolean,
  forwardedFor: readonly string[],
): Promise<string[]> {
  const logged: string[] = [];
  const logger = { warn: (line: string) => logged.push(line), error: (line: string) => logged.push(line) };
  const store = new MemoryStore({ clock: manualClock().now });
  const app = await driver.build({ trustProxy, global: { limit: 10, window: '1h', store, logger } });
  try {
    for (const value of forwardedFor) await app.send('GET', '/a', { 'x-forwarded-for': value });
  } finally {
    await app.close();
  }
  return logged;
}

describe.each([...drivers, ...nestDrivers, ...webDrivers])('$name', (driver) => {
  const own = ownMarks(driver);
  const others = (Object.keys(MARKS) as Mark[]).filter((mark) => !own.includes(mark));

  /** Every line about the client IP's setting names the adapter's own, and no other framework's. */
  function expectOwnWords(lines: readonly string[]) {
    for (const line of lines) {
      for (const mark of own) expect(line).toContain(MARKS[mark][0]);
      for (const word of others.flatMap((mark) => MARKS[mark])) expect(line).not.toContain(word);
    }
  }

  it('TOLLGATE_UNTRUSTED_FORWARDED_FOR names its own setting', async () => {
    const logged = await logOf(driver, false, ['198.51.100.1']);
    const lines = logged.filter((line) => line.startsWith('[TOLLGATE_UNTRUSTED_FORWARDED_FOR]'));
    expect(lines).toHaveLength(1);
    expectOwnWords(lines);
  });

  it('TOLLGATE_UNPARSED_IP names its own setting', async () => {
    const logged = await logOf(driver, true, ['unknown']);
    const lines = logged.filter((line) => line.startsWith('[TOLLGATE_UNPARSED_IP]'));
    expect(lines).toHaveLength(1);
    expectOwnWords(lines);
  });

  // Hono and fetch have no trust-proxy setting to find permissive: the app's `ip` function reads the header.
  it.skipIf(own.includes('ipOption'))('TOLLGATE_PERMISSIVE_TRUST_PROXY names its own setting', async () => {
    const logged = await logOf(driver, true, ['198.51.100.1']);
    const lines = logged.filter((line) => line.startsWith('[TOLLGATE_PERMISSIVE_TRUST_PROXY]'));
    expect(lines).toHaveLength(1);
    expectOwnWords(lines);
  });
});
