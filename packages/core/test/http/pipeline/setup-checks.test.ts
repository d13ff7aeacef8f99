/** The setup warnings that peers' users know: each found on live requests, each said once. */
import { describe, expect, it } from 'vitest';
import type { RequestAccess } from '../../../src/http/identity/request-keys.js';
import type { AdapterSettings, RateLimitOptions } from '../../../src/http/options/option-types.js';
import { createHttpLimiter } from '../../../src/http/pipeline/http-limiter.js';
import { type FakeRequest, fakeAccess, recordingLogger, storeOnClock, TEST_ADAPTER } from '../fixtures.js';

type Options = RateLimitOptions<FakeRequest>;

function setup(
  options: Options = {},
  access: RequestAccess<FakeRequest> = fakeAccess,
  settings: AdapterSettings = TEST_ADAPTER,
) {
  const { store } = storeOnClock();
  const { logger, warnings } = recordingLogger();
  const limiter = createHttpLimiter<FakeRequest>(
    { limit: 100, window: '1m', name: 'setup', store, logger, ...options },
    access,
    settings,
  );
  const codes = () => warnings.map((line) => /^\[(\w+)\]/.exec(line)?.[1]);
  return { limiter, warnings, codes };
}

describe('TOLLGATE_DOUBLE_COUNT', () => {
  it('warns once when one limiter checks the same request twice, and charges it twice', async () => {
    const { limiter, codes } = setup();
    const request = { ip: '203.0.113.7' };
    await limiter.check(request);
    const second = await limiter.check(request);
    await limiter.check(request);
    expect((second as { info: { remaining: number } }).info.remaining).toBe(98);
    expect(codes()).toEqual(['TOLLGATE_DOUBLE_COUNT']);
  });

  it('finds a limiter checking requests twice among many it checks once, marking only some', async () => {
    const { limiter, codes } = setup({ limit: 1000 });
    const once = Array.from({ length: 45 }, () => ({ ip: '203.0.113.7' }));
    for (const request of once) await limiter.check(request);
    expect(once.filter((request) => Object.getOwnPropertySymbols(request).length > 0).length).toBe(2);
    for (let i = 0; i < 40 && codes().length === 0; i++) {
      const twice = { ip: '203.0.113.7' };
      await limiter.check(twice);
      await limiter.check(twice);
    }
    expect(codes()).toEqual(['TOLLGATE_DOUBLE_COUNT']);
  });

  it('says nothing of two limiters checking one request, nor of one limiter checking many', async () => {
    const first = setup();
    const second = setup();
    const request = { ip: '203.0.113.7' };
    await first.limiter.check(request);
    await second.limiter.check(request);
    for (let i = 0; i < 3; i++) await first.limiter.check({ ip: '203.0.113.7' });
    expect([...first.codes(), ...second.codes()]).toEqual([]);
  });
});

describe('TOLLGATE_PERMISSIVE_TRUST_PROXY', () => {
  it('warns once when the framework trusts every proxy, asking on the first request only', async () => {
    let asked = 0;
    const access = { ...fakeAccess, trustsEveryProxy: () => ++asked > 0 };
    const { limiter, codes } = setup({}, access);
    for (let i = 0; i < 3; i++) await limiter.check({ ip: '203.0.113.7' });
    expect([asked, codes()]).toEqual([1, ['TOLLGATE_PERMISSIVE_TRUST_PROXY']]);
  });

  it('says nothing when it does not, or when the adapter cannot tell', async () => {
    const trusting = setup({}, { ...fakeAccess, trustsEveryProxy: () => false });
    const unknowing = setup();
    await trusting.limiter.check({ ip: '203.0.113.7' });
    await unknowing.limiter.check({ ip: '203.0.113.7' });
    expect([...trusting.codes(), ...unknowing.codes()]).toEqual([]);
  });
});

describe("the proxy warnings name the adapter's client-IP setting", () => {
  const koa: AdapterSettings = {
    adapter: '@tollgate/koa',
    clientIpSetting: {
      name: 'app.proxy',
      trustExactly: 'app.proxy with app.maxIpsCount set to their number',
    },
  };
  const untrusted = { ip: '10.0.0.2', socketIp: '10.0.0.2', headers: { 'x-forwarded-for': '198.51.100.9' } };

  it('TOLLGATE_UNTRUSTED_FORWARDED_FOR says its name, TOLLGATE_PERMISSIVE_TRUST_PROXY how it trusts exactly', async () => {
    const permissive = setup({}, { ...fakeAccess, trustsEveryProxy: () => true }, koa);
    const ignored = setup({}, fakeAccess, koa);
    await permissive.limiter.check({ ip: '203.0.113.7' });
    await ignored.limiter.check(untrusted);
    expect(permissive.warnings[0]).toMatch(
      /Trust exactly your proxies: app\.proxy with app\.maxIpsCount set to their number\.$/,
    );
    expect(ignored.warnings[0]).toMatch(/If the app is behind a proxy, say so with app\.proxy\.$/);
  });

  it("says an adapter's own texts of TOLLGATE_UNTRUSTED_FORWARDED_FOR and TOLLGATE_MISSING_IP, and in the error", async () => {
    const web: AdapterSettings = {
      adapter: '@tollgate/web',
      clientIpSetting: {
        name: 'the ip option',
        noAddress: 'ip returned nothing: see the recipes',
        untrustedForwardedFor: 'X-Forwarded-For does not name what ip returned',
      },
    };
    const { limiter, warnings } = setup({}, fakeAccess, web);
    await limiter.check(untrusted);
    await expect(limiter.check({})).rejects.toThrow(/^@tollgate\/web: ip returned nothing: see the recipes$/);
    expect(warnings).toEqual([
      '[TOLLGATE_UNTRUSTED_FORWARDED_FOR] X-Forwarded-For does not name what ip returned',
      '[TOLLGATE_MISSING_IP] ip returned nothing: see the recipes',
    ]);
  });

  // Regression test for "a request refused for having no address is also told every client shares a bucket".
  it('says nothing of X-Forwarded-For for a request with no address at all: TOLLGATE_MISSING_IP does', async () => {
    const { limiter, codes } = setup();
    await expect(limiter.check({ headers: { 'x-forwarded-for': '198.51.100.9' } })).rejects.toMatchObject({
      code: 'TOLLGATE_NO_CLIENT_ADDRESS',
    });
    await limiter.check(untrusted);
    expect(codes()).toEqual(['TOLLGATE_MISSING_IP', 'TOLLGATE_UNTRUSTED_FORWARDED_FOR']);
  });

  it("is neutral for an adapter that gives none, naming no framework's", async () => {
    const permissive = setup({}, { ...fakeAccess, trustsEveryProxy: () => true });
    const ignored = setup();
    await permissive.limiter.check({ ip: '203.0.113.7' });
    await ignored.limiter.check(untrusted);
    const lines = [...permissive.warnings, ...ignored.warnings];
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line).toContain("the framework's trusted-proxy setting");
      expect(line).not.toMatch(/Express|Fastify|Koa|trust proxy'|trustProxy|app\.proxy|maxIpsCount/);
    }
  });
});

describe('TOLLGATE_UNGROUPED_IPV6_KEY', () => {
  it.each([
    ['a bare address', '2001:db8::1'],
    ['an address behind a prefix', 'client:2001:db8::1'],
    ['a full address', '2001:0db8:0000:0000:0000:0000:0000:0001'],
  ])('warns once for %s', async (_name, identity) => {
    const { limiter, codes } = setup({ key: () => identity });
    for (let i = 0; i < 2; i++) await limiter.check({ ip: '2001:db8::1' });
    expect(codes()).toEqual(['TOLLGATE_UNGROUPED_IPV6_KEY']);
  });

  it.each([
    ["byIp's subnet", 'ip:2001:db8::/56'],
    ["byIp's own address, asked for with ipv6Subnet: false", 'ip:2001:db8::1'],
    ['an IPv4 address', '203.0.113.7'],
    ['an IPv4 address written as IPv6', '::ffff:203.0.113.7'],
    ['an API key hash', 'key:sha256:Xq3-abc'],
    ['a user', 'user:42'],
  ])('says nothing of %s', async (_name, identity) => {
    const { limiter, codes } = setup({ key: () => identity });
    await limiter.check({ ip: '2001:db8::1' });
    expect(codes()).toEqual([]);
  });
});

describe('TOLLGATE_CREATED_IN_HANDLER', () => {
  it('is said once per process for limiters of the same options, as a handler makes them', () => {
    const inHandler = { ...TEST_ADAPTER, inRequestHandler: true };
    const perRequest = (limit: number) => {
      // No name: a derived one, as most apps have.
      const { limiter, codes } = setup({ name: undefined, limit } as never, fakeAccess, inHandler);
      return [limiter.name, codes()];
    };
    const [firstName, first] = perRequest(7);
    const [secondName, second] = perRequest(7);
    expect(secondName).toBe(`${firstName}-2`);
    expect([first, second]).toEqual([['TOLLGATE_CREATED_IN_HANDLER'], []]);
    expect(perRequest(8)[1]).toEqual(['TOLLGATE_CREATED_IN_HANDLER']); // other options: another place
  });

  it('is not said of a limiter created at startup', () => {
    expect(setup().codes()).toEqual([]);
  });
});

describe('switched off', () => {
  it('stops each check by its code', async () => {
    const warnings = {
      TOLLGATE_DOUBLE_COUNT: false,
      TOLLGATE_UNGROUPED_IPV6_KEY: false,
      TOLLGATE_PERMISSIVE_TRUST_PROXY: false,
    };
    const access = { ...fakeAccess, trustsEveryProxy: () => true };
    const { limiter, codes } = setup({ warnings, key: () => '2001:db8::1' }, access);
    const request = { ip: '2001:db8::1' };
    await limiter.check(request);
    await limiter.check(request);
    expect(codes()).toEqual([]);
  });
});
