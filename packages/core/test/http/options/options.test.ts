import { describe, expect, it, vi } from 'vitest';
import type { RateLimitOptions } from '../../../src/http/options/option-types.js';
import { mergeRateLimitOptions, validateInheritedOptions } from '../../../src/http/options/route-options.js';
import { createHttpLimiter } from '../../../src/http/pipeline/http-limiter.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import { type FakeRequest, fakeAccess, TEST_ADAPTER } from '../fixtures.js';

type Options = RateLimitOptions<FakeRequest>;

const BASE: Options = { limit: 10, window: '1m', name: 'options-test' };

const build = (options: Options, settings: Parameters<typeof createHttpLimiter>[2] = TEST_ADAPTER) =>
  createHttpLimiter(options, fakeAccess, settings);

describe('option validation at construction', () => {
  it.each<[string, Options, RegExp]>([
    [
      'limit',
      { limit: -1, window: '1m' },
      /limit must be a positive whole number, or 0 to refuse every request; got -1/,
    ],
    ['limit', { limit: 2.5, window: '1m' }, /limit must be a positive whole number/],
    ['limit', { limit: '10' as never, window: '1m' }, /limit must be a positive whole number/],
    ['window', { limit: 10, window: '1 fortnight' as never }, /@tollgate\/test: window: unknown unit/],
    ['window', { limit: 10, window: '10 secnds' }, /@tollgate\/test: window: .*did you mean '10 seconds'\?/],
    ['window', { limit: 10, window: 0 }, /@tollgate\/test: window must be/],
    ['burst', { limit: 10, window: '1m', burst: 0 }, /burst must be a positive whole number; got 0/],
    ['burst', { limit: 10, window: '1m', burst: 1.5 }, /burst must be a positive whole number/],
    ['policies', { policies: [] }, /policies must hold at least one policy/],
    [
      'policies',
      {
        policies: [
          { limit: 1, window: '1s' },
          { limit: 0, window: '1s' },
        ],
      },
      /policies\[1\]\.limit/,
    ],
    ['policies', { policies: { limit: 1, window: 'soon' as never } }, /policy\.window/],
    ['store', { ...BASE, store: {} as never }, /@tollgate\/test: store must be a Store/],
    ['store', { ...BASE, store: 'redis' as never }, /@tollgate\/test: store must be a Store/],
    ['key', { ...BASE, key: 'ip' as never }, /@tollgate\/test: key must be a function/],
    ['name', { ...BASE, name: 'has space' }, /@tollgate\/test: name must be 1–64/],
    ['name', { ...BASE, name: '' }, /@tollgate\/test: name must be 1–64/],
    ['name', { ...BASE, name: 'n'.repeat(65) }, /@tollgate\/test: name must be 1–64/],
    ['name', { ...BASE, name: 42 as never }, /@tollgate\/test: name must be 1–64/],
    ['cost', { ...BASE, cost: 0 }, /@tollgate\/test: cost must be a positive number or a function; got 0/],
    ['cost', { ...BASE, cost: -1 }, /@tollgate\/test: cost must be/],
    ['cost', { ...BASE, cost: Number.NaN }, /@tollgate\/test: cost must be/],
    ['cost', { ...BASE, cost: Number.POSITIVE_INFINITY }, /@tollgate\/test: cost must be/],
    ['cost', { ...BASE, cost: '2' as never }, /@tollgate\/test: cost must be/],
    ['skip', { ...BASE, skip: true as never }, /@tollgate\/test: skip must be a function/],
    [
      'headers',
      { ...BASE, headers: 'draft-8' as never },
      /@tollgate\/test: headers must be 'draft-11', 'draft-10'/,
    ],
    ['headers', { ...BASE, headers: true as never }, /@tollgate\/test: headers must be/],
    ['legacyHeaders', { ...BASE, legacyHeaders: 'yes' as never }, /@tollgate\/test: legacyHeaders must be/],
    ['message', { ...BASE, message: null as never }, /@tollgate\/test: message must be a string, an object/],
    ['message', { ...BASE, message: 429 as never }, /@tollgate\/test: message must be/],
    ['failOpen', { ...BASE, failOpen: 0 as never }, /@tollgate\/test: failOpen must be true or false/],
    ['timeout', { ...BASE, timeout: 0 }, /@tollgate\/test: timeout must be/],
    ['timeout', { ...BASE, timeout: 'never' as never }, /@tollgate\/test: timeout must be/],
    ['timeout', { ...BASE, timeout: true as never }, /@tollgate\/test: timeout must be/],
    ['logger', { ...BASE, logger: {} as never }, /@tollgate\/test: logger must have warn and error/],
    [
      'logger',
      { ...BASE, logger: { warn() {} } as never },
      /@tollgate\/test: logger must have warn and error/,
    ],
    ['warnings', { ...BASE, warnings: 'off' as never }, /@tollgate\/test: warnings must be a boolean/],
    ['warnings', { ...BASE, warnings: null as never }, /@tollgate\/test: warnings must be a boolean/],
    [
      'throwOnLimit',
      { ...BASE, throwOnLimit: 1 as never },
      /@tollgate\/test: throwOnLimit must be true or false/,
    ],
    ['handler', { ...BASE, handler: 'reply' }, /@tollgate\/test: handler must be a function/],
    ['warnings', { ...BASE, warnings: { TOLLGATE_MISSING_IP: 'off' as never } }, /MISSING_IP must be true/],
  ])('rejects a bad %s with a TypeError naming it and the adapter: %j', (option, options, message) => {
    const attempt = () => build(options);
    expect(attempt).toThrow(TypeError);
    expect(attempt).toThrow(message);
    expect(attempt).toThrow(option === 'policies' ? /polic/ : option);
    expect(attempt).toThrow(/^@tollgate\/test: /);
  });

  // Top-level limit/window/burst used to be checked only as a policy, so the message lacked the adapter.
  it('names the adapter when a top-level limit is bad, not just "policy.limit"', () => {
    expect(() => build({ limit: -1, window: '1m' })).toThrow(
      new TypeError(
        '@tollgate/test: limit must be a positive whole number, or 0 to refuse every request; got -1',
      ),
    );
  });

  it('names the adapter when burst × window is too large to count exactly', () => {
    const attempt = () => build({ limit: 1_000_000_000, window: '365d' });
    expect(attempt).toThrow(RangeError);
    expect(attempt).toThrow(/^@tollgate\/test: policy: burst × window is too large/);
  });

  it('names the adapter when a limit function returns a bad limit', async () => {
    await expect(build({ limit: () => 2.5, window: '1m' }).check({ ip: '192.0.2.1' })).rejects.toThrow(
      new TypeError(
        '@tollgate/test: limit must be a positive whole number, or 0 to refuse every request; got 2.5',
      ),
    );
  });

  // With `limit` as a function the policy is only built per request, so the static parts must be checked
  // here: otherwise every request fails with a TypeError in production, long after deployment.
  it.each([0, 1.5, '5'])('rejects burst %j at construction when limit is a function', (burst) => {
    const options: Options = { limit: () => 10, window: '1m', burst: burst as never };
    expect(() => build(options)).toThrow(TypeError);
    expect(() => build(options)).toThrow(/burst/);
  });

  it('rejects a window that is bad even when limit is a function', () => {
    expect(() => build({ limit: () => 10, window: 'later' as never })).toThrow(/@tollgate\/test: window/);
  });

  it.each([undefined, null, 'limit: 10', 10, [], () => ({})])(
    'rejects %j instead of an options object',
    (options) => {
      expect(() => build(options as never)).toThrow(
        new TypeError("@tollgate/test: options must be an object like { limit: 100, window: '1m' }"),
      );
    },
  );

  it.each<[Options, object]>([
    [{}, { policy: '100-per-1m', limit: 100, windowMs: 60_000, capacity: 100 }],
    [{ limit: 10 }, { policy: '10-per-1m', limit: 10, windowMs: 60_000, capacity: 10 }],
    [{ window: '1h' }, { policy: '100-per-1h', limit: 100, windowMs: 3_600_000, capacity: 100 }],
    [{ burst: 5 }, { policy: '100-per-1m', limit: 100, windowMs: 60_000, capacity: 5 }],
  ])('defaults limit to 100 and window to 1 minute, each on its own: %j', async (options, policy) => {
    const outcome = await build({ name: 'defaults', ...options }).check({ ip: '192.0.2.1' });
    expect(outcome).toMatchObject({ kind: 'allowed', info: { decision: { decidedBy: policy } } });
  });

  it('names the default policy as the same options written out: the second such limiter gets -2', () => {
    const settings = { ...TEST_ADAPTER, nameSeed: 'default-policy-name' };
    const first = build({}, settings).name;
    expect(build({ limit: 100, window: 60_000 }, settings).name).toBe(`${first}-2`);
  });

  it('takes limit 0, but not with burst, which would mean nothing', () => {
    expect(() => build({ limit: 0 })).not.toThrow();
    expect(() => build({ limit: 0, window: '1h', burst: 5 })).toThrow(
      new TypeError(
        '@tollgate/test: burst cannot be combined with limit 0, which refuses every request; leave burst out',
      ),
    );
  });

  it('keeps positive limits for the policies option; only the limit option may be 0', () => {
    expect(() => build({ policies: { limit: 0, window: '1m' } })).toThrow(
      /@tollgate\/test: policy\.limit must be a positive whole number; got 0/,
    );
  });

  it.each<Options>([
    { policies: { limit: 1, window: '1s' }, limit: 10 },
    { policies: { limit: 1, window: '1s' }, window: '1m' },
    { policies: { limit: 1, window: '1s' }, burst: 5 },
  ])('rejects policies together with limit, window or burst: %j', (options) => {
    expect(() => build(options)).toThrow(/give either policies or limit\/window\/burst, not both/);
  });

  it('rejects handler together with throwOnLimit', () => {
    expect(() => build({ ...BASE, handler: () => {}, throwOnLimit: true })).toThrow(
      new TypeError('@tollgate/test: give either handler or throwOnLimit, not both'),
    );
    expect(() => build({ ...BASE, handler: () => {}, throwOnLimit: false })).not.toThrow();
  });

  it('accepts every option at once when each is valid', () => {
    const limiter = build({
      limit: 10,
      window: '1m',
      burst: 20,
      store: new MemoryStore(),
      key: () => 'k',
      name: 'all-options',
      cost: () => 1,
      skip: () => false,
      headers: 'draft-6',
      legacyHeaders: true,
      message: { error: 'slow down' },
      failOpen: false,
      timeout: false,
      logger: { warn() {}, error() {} },
      warnings: { TOLLGATE_MISSING_IP: false },
      throwOnLimit: false,
      handler: () => {},
    });
    expect(limiter.name).toBe('all-options');
  });
});

describe('default names', () => {
  /** A fresh copy of the modules, as in another process running the same code. */
  async function freshProcess() {
    vi.resetModules();
    const { createHttpLimiter: create } = await import('../../../src/http/pipeline/http-limiter.js');
    return (options: Options, settings = TEST_ADAPTER) => create(options, fakeAccess, settings).name;
  }

  it('derives a stable name from the options, the same in every process', async () => {
    const options: Options = { limit: 7, window: '1m', burst: 9 };
    const first = (await freshProcess())(options);
    const second = (await freshProcess())({ ...options });
    expect(first).toMatch(/^auto-[0-9a-f]{12}$/);
    expect(second).toBe(first);
  });

  it('gives the 2nd and 3rd limiter with the same options distinct, stable names', async () => {
    const names = async () => {
      const nameOf = await freshProcess();
      return [1, 2, 3].map(() => nameOf({ limit: 7, window: '1m' }));
    };
    const [first, second, third] = await names();
    expect(second).toBe(`${first}-2`);
    expect(third).toBe(`${first}-3`);
    expect(await names()).toEqual([first, second, third]);
  });

  it('derives one name from one shape, however the options are written', async () => {
    const nameOf = await freshProcess();
    const first = nameOf({ limit: 7, window: '1m' });
    expect(nameOf({ limit: 7, window: 60_000 })).toBe(`${first}-2`);
    expect(nameOf({ policies: { window: '60s', limit: 7 } })).toBe(`${first}-3`);
  });

  it('derives different names from different limits, windows, bursts or seeds', async () => {
    const nameOf = await freshProcess();
    const names = [
      nameOf({ limit: 7, window: '1m' }),
      nameOf({ limit: 8, window: '1m' }),
      nameOf({ limit: 7, window: '1h' }),
      nameOf({ limit: 7, window: '1m', burst: 9 }),
      nameOf({ policies: { limit: 7, window: '1m', name: 'seven' } }),
      nameOf({ limit: 7, window: '1m' }, { ...TEST_ADAPTER, nameSeed: 'GET /search' }),
    ];
    expect(names.every((name) => /^auto-[0-9a-f]{12}$/.test(name))).toBe(true);
    expect(new Set(names).size).toBe(names.length);
  });

  it('keeps a given name and does not count it as a default', async () => {
    const nameOf = await freshProcess();
    expect(nameOf({ limit: 7, window: '1m', name: 'search' })).toBe('search');
    expect(nameOf({ limit: 7, window: '1m', name: 'search' })).toBe('search');
    expect(nameOf({ limit: 7, window: '1m' })).toMatch(/^auto-[0-9a-f]{12}$/);
  });
});

describe('mergeRateLimitOptions', () => {
  const store = new MemoryStore();
  const app: Options = { store, limit: 100, window: '1m', burst: 150, name: 'app', legacyHeaders: true };

  it('turns limiting off for the route with false', () => {
    expect(mergeRateLimitOptions(app, false)).toBe(false);
  });

  it('inherits everything but the name when the route says nothing', () => {
    expect(mergeRateLimitOptions(app, undefined)).toEqual({
      store,
      limit: 100,
      window: '1m',
      burst: 150,
      legacyHeaders: true,
    });
  });

  it('never inherits the name, but keeps a name the route gives', () => {
    expect(mergeRateLimitOptions(app, { legacyHeaders: false })).not.toHaveProperty('name');
    expect(mergeRateLimitOptions(app, { name: 'route' })).toMatchObject({ name: 'route' });
  });

  it("lets the route's values win over the app's", () => {
    expect(mergeRateLimitOptions(app, { window: '1h', headers: 'draft-7' })).toEqual({
      store,
      limit: 100,
      window: '1h',
      burst: 150,
      legacyHeaders: true,
      headers: 'draft-7',
    });
  });

  it("drops the app's burst when the route sets its own limit", () => {
    expect(mergeRateLimitOptions(app, { limit: 10 })).toEqual({
      store,
      limit: 10,
      window: '1m',
      legacyHeaders: true,
    });
    expect(mergeRateLimitOptions(app, { limit: 10, burst: 12 })).toMatchObject({ limit: 10, burst: 12 });
  });

  it("replaces the app's limit, window and burst with the route's policies", () => {
    const policies = [{ limit: 1, window: '1s' }] as const;
    expect(mergeRateLimitOptions(app, { policies })).toEqual({ store, legacyHeaders: true, policies });
  });

  it.each<Options>([{ limit: 5 }, { window: '1h' }, { burst: 3 }])(
    "replaces the app's policies with the route's %j",
    (route) => {
      const withPolicies: Options = { store, policies: { limit: 1, window: '1s' }, failOpen: false };
      expect(mergeRateLimitOptions(withPolicies, route)).toEqual({ store, failOpen: false, ...route });
    },
  );

  it('gives options that a limiter accepts', () => {
    const merged = mergeRateLimitOptions(app, { limit: 10 });
    expect(merged).not.toBe(false);
    const limiter = createHttpLimiter({ ...(merged as Options), name: 'merged' }, fakeAccess, TEST_ADAPTER);
    expect(limiter.name).toBe('merged');
  });

  it('leaves both inputs as they were', () => {
    const appCopy = { ...app };
    const route: Options = { policies: { limit: 1, window: '1s' } };
    mergeRateLimitOptions(app, route);
    expect(app).toEqual(appCopy);
    expect(route).toEqual({ policies: { limit: 1, window: '1s' } });
  });
});

describe('mergeRateLimitOptions with an override that is not options', () => {
  it.each([() => ({ limit: 1 }), [{ limit: 1 }], true, 'strict', null, 0])('rejects %j', (override) => {
    const attempt = () => mergeRateLimitOptions({ limit: 1, window: '1s' }, override as never, 'route /x');
    expect(attempt).toThrow(TypeError);
    expect(attempt).toThrow(/^route \/x must be options like \{ limit: 10, window: '1s' \}, or false; got /);
  });
});

describe('validateInheritedOptions', () => {
  it('accepts options that leave all or part of the policy to the routes', () => {
    expect(() => validateInheritedOptions({}, TEST_ADAPTER)).not.toThrow();
    expect(() => validateInheritedOptions({ window: '1m', legacyHeaders: true }, TEST_ADAPTER)).not.toThrow();
    expect(() => validateInheritedOptions({ limit: 5 }, TEST_ADAPTER)).not.toThrow();
  });

  it('still rejects every bad option it is given', () => {
    expect(() => validateInheritedOptions({ window: 'soon' }, TEST_ADAPTER)).toThrow(/window must be/);
    expect(() => validateInheritedOptions({ failOpen: 'yes' as never }, TEST_ADAPTER)).toThrow(/failOpen/);
    expect(() => validateInheritedOptions({ max: 5 } as never, TEST_ADAPTER)).toThrow(/unknown option 'max'/);
    expect(() => validateInheritedOptions(null as never, TEST_ADAPTER)).toThrow(/options must be an object/);
  });
});
