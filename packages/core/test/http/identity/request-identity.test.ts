/**
 * The identity a request is charged to, and the warnings about its client address: said once, by the
 * default key as by the fallback of other keys, in the words of the adapter's own client-IP setting.
 */
import { describe, expect, it } from 'vitest';
import { ClientAddressError } from '../../../src/http/identity/client-address-error.js';
import { byIp, byUser, firstOf, type KeyFunction } from '../../../src/http/identity/request-keys.js';
import type { AdapterSettings } from '../../../src/http/options/option-types.js';
import { createHttpConcurrencyLimiter } from '../../../src/http/pipeline/http-concurrency.js';
import { createHttpLimiter } from '../../../src/http/pipeline/http-limiter.js';
import { type FakeRequest, fakeAccess, recordingLogger, storeOnClock, TEST_ADAPTER } from '../fixtures.js';

/** A rate limiter of 1 per hour keyed by `key` (the default when `undefined`), logging into an array. */
function rateLimiter(key?: KeyFunction<FakeRequest>, settings: AdapterSettings = TEST_ADAPTER) {
  const { store } = storeOnClock();
  const { logger, warnings } = recordingLogger();
  const options = { limit: 1, window: '1h', name: 'identity', store, logger, ...(key ? { key } : {}) };
  return { limiter: createHttpLimiter<FakeRequest>(options, fakeAccess, settings), warnings };
}

const unparsedLines = (warnings: readonly string[]) =>
  warnings.filter((line) => line.startsWith('[TOLLGATE_UNPARSED_IP]'));

describe('an unreadable client address (TOLLGATE_UNPARSED_IP)', () => {
  it.each([
    ['the default key', undefined],
    ['key: byIp()', byIp<FakeRequest>()],
    [
      'byIp() last in a firstOf',
      firstOf<FakeRequest>(
        byUser((request) => request.user),
        byIp(),
      ),
    ],
    ['the fallback of a key that found nothing', byUser<FakeRequest>((request) => request.user)],
  ])('is reported once with %s, and limited in a bucket of its own', async (_name, key) => {
    const { limiter, warnings } = rateLimiter(key);
    expect((await limiter.check({ ip: 'unknown' })).kind).toBe('allowed');
    expect((await limiter.check({ ip: 'unknown' })).kind).toBe('limited');
    expect((await limiter.check({ ip: 'obfuscated-7' })).kind).toBe('allowed'); // not pooled with `unknown`
    expect((await limiter.check({ ip: '203.0.113.7' })).kind).toBe('allowed'); // nor a readable client with them
    expect(unparsedLines(warnings)).toHaveLength(1);
  });

  it('is not reported for readable addresses, NAT64 ones included, nor when switched off', async () => {
    const { limiter, warnings } = rateLimiter();
    await limiter.check({ ip: '64:ff9b::1.2.3.4' });
    expect((await limiter.check({ ip: '1.2.3.4' })).kind).toBe('limited'); // the same IPv4 client
    expect(warnings).toEqual([]);
    const { store } = storeOnClock();
    const silenced = recordingLogger();
    const off = createHttpLimiter<FakeRequest>(
      { store, logger: silenced.logger, warnings: { TOLLGATE_UNPARSED_IP: false } },
      fakeAccess,
      TEST_ADAPTER,
    );
    await off.check({ ip: 'unknown' });
    expect(silenced.warnings).toEqual([]);
  });

  it('is reported by a concurrency limiter with the default key too', async () => {
    const { store } = storeOnClock();
    const { logger, warnings } = recordingLogger();
    const limiter = createHttpConcurrencyLimiter<FakeRequest>(
      { limit: 1, store, logger },
      fakeAccess,
      TEST_ADAPTER,
    );
    const first = await limiter.check({ ip: 'unknown' });
    expect(first.kind).toBe('acquired');
    expect((await limiter.check({ ip: 'unknown' })).kind).toBe('limited');
    expect((await limiter.check({ ip: '203.0.113.7' })).kind).toBe('acquired');
    expect(unparsedLines(warnings)).toHaveLength(1);
  });
});

describe("the adapter's words for its client-IP setting", () => {
  const express: AdapterSettings = {
    adapter: '@tollgate/express',
    clientIpSetting: { name: "app.set('trust proxy', …)" },
  };

  it('end TOLLGATE_UNPARSED_IP and TOLLGATE_MISSING_IP, and the ClientAddressError', async () => {
    const { limiter, warnings } = rateLimiter(undefined, express);
    await limiter.check({ ip: 'unknown' });
    const refused = limiter.check({});
    await expect(refused).rejects.toThrow(ClientAddressError);
    await expect(refused).rejects.toThrow(/^@tollgate\/express: .*, or check app\.set\('trust proxy', …\)$/);
    expect(warnings).toHaveLength(2);
    for (const line of warnings) expect(line).toMatch(/app\.set\('trust proxy', …\)$/);
  });

  it("are neutral when the adapter gives none: no framework's setting is named", async () => {
    const { limiter, warnings } = rateLimiter();
    await limiter.check({ ip: 'unknown' });
    await expect(limiter.check({})).rejects.toThrow(ClientAddressError);
    for (const line of warnings) {
      expect(line).toMatch(/the framework's trusted-proxy setting$/);
      expect(line).not.toMatch(/Express|Fastify|Koa|trust proxy'|trustProxy|app\.proxy/);
    }
  });
});
