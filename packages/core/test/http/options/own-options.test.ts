/**
 * Options are read from their own properties only: a name another library's bug put on
 * `Object.prototype` (`skip`, `dryRun`, `allowList`, `burst`, `ban`, …) turns no limiting off, before
 * construction or after it, for static limits and for limits a function returns per request.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RateLimitOutcome } from '../../../src/http/answer/outcome.js';
import type { RateLimitOptions } from '../../../src/http/options/option-types.js';
import { mergeRateLimitOptions } from '../../../src/http/options/route-options.js';
import { createHttpLimiter } from '../../../src/http/pipeline/http-limiter.js';
import { createLimiter } from '../../../src/limiter/limiter.js';
import { resolveZeroLimit, zeroLimiter } from '../../../src/limiter/zero-limit.js';
import type { Store } from '../../../src/model/store.js';
import { ownOptions } from '../../../src/support/value-checks.js';
import {
  type FakeRequest,
  failingStore,
  fakeAccess,
  recordingLogger,
  storeOnClock,
  TEST_ADAPTER,
} from '../fixtures.js';

/** A request whose plan's limit the app looked up: what a `limit` function reads. */
type PlanRequest = FakeRequest & { readonly limit: number };

const CLIENT = { ip: '203.0.113.7' } as const;
const polluted: string[] = [];

/** Puts `names` on `Object.prototype`, as a prototype-pollution bug elsewhere in the app would. */
function pollute(names: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(names)) {
    (Object.prototype as Record<string, unknown>)[name] = value;
    polluted.push(name);
  }
}

// The finally of every test: nothing polluted outlives it, whatever it asserted.
afterEach(() => {
  for (const name of polluted.splice(0)) delete (Object.prototype as Record<string, unknown>)[name];
});

/** An HTTP limiter over a memory store on a hand-moved clock, 2 per minute unless `options` say otherwise. */
function setup<Req extends FakeRequest = FakeRequest>(options: RateLimitOptions<Req> = {}, store?: Store) {
  const onClock = storeOnClock();
  const { logger, warnings, errors } = recordingLogger();
  const limiter = createHttpLimiter<Req>(
    { limit: 2, window: '1m', name: 'own-options', store: store ?? onClock.store, logger, ...options },
    fakeAccess,
    TEST_ADAPTER,
  );
  return { limiter, clock: onClock.clock, warnings, errors };
}

async function kinds<Req>(
  limiter: { check(request: Req): Promise<RateLimitOutcome> },
  request: Req,
  count: number,
): Promise<RateLimitOutcome['kind'][]> {
  const outcomes: RateLimitOutcome['kind'][] = [];
  for (let i = 0; i < count; i++) outcomes.push((await limiter.check({ ...request })).kind);
  return outcomes;
}

const LIMITED_THIRD = ['allowed', 'allowed', 'limited'];

describe('ownOptions', () => {
  it('copies own enumerable properties into an object without a prototype', () => {
    const inherited = Object.assign(Object.create({ skip: () => true }), { limit: 5 });
    Object.defineProperty(inherited, 'hidden', { value: 1, enumerable: false });
    const own = ownOptions(inherited) as Record<string, unknown>;
    expect(Object.getPrototypeOf(own)).toBeNull();
    expect(Object.keys(own)).toEqual(['limit']);
    expect(own.skip).toBeUndefined();
  });

  it('returns what is not an object of settings as it is', () => {
    const policies = [{ limit: 1, window: '1s' }];
    const fn = () => 1;
    for (const value of [undefined, false, 'x', fn, policies]) expect(ownOptions(value)).toBe(value);
  });

  it("keeps an own '__proto__' (from JSON.parse) as data, so it is rejected as an unknown option", () => {
    const parsed = JSON.parse('{ "limit": 2, "__proto__": { "dryRun": true } }');
    expect((ownOptions(parsed) as { dryRun?: unknown }).dryRun).toBeUndefined();
    expect(() => setup(parsed)).toThrow(/unknown option '__proto__'/);
  });
});

describe('with Object.prototype polluted before the limiter is built', () => {
  it.each<[string, Record<string, unknown>]>([
    ['skip', { skip: () => true }],
    ['dryRun', { dryRun: true }],
    ['allowList (a function)', { allowList: () => true }],
    ['allowList (the client IP)', { allowList: [CLIENT.ip] }],
    ['burst', { burst: 1e9 }],
    ['cost', { cost: 0.001 }],
    ['policies', { policies: { limit: 1e9, window: '1m' } }],
  ])('still refuses the 3rd request on a limit of 2 (%s)', async (_name, pollution) => {
    pollute(pollution);
    expect(await kinds(setup().limiter, CLIENT, 3)).toEqual(LIMITED_THIRD);
  });

  it('bans no one for a ban on Object.prototype', async () => {
    pollute({ ban: { after: 1, duration: '7d' } });
    const { limiter, clock } = setup();
    expect(await kinds(limiter, CLIENT, 3)).toEqual(LIMITED_THIRD);
    clock.nowMs += 60_000;
    expect(await kinds(limiter, CLIENT, 1)).toEqual(['allowed']);
  });

  it('sends every header for header switches on Object.prototype', async () => {
    pollute({
      headers: false,
      legacyHeaders: true,
      addHeaders: { 'retry-after': false },
      addHeadersOnExceeding: { ratelimit: false },
    });
    const { limiter } = setup();
    const allowed = await limiter.check({ ...CLIENT });
    await limiter.check({ ...CLIENT });
    const limited = await limiter.check({ ...CLIENT });
    expect(allowed.kind === 'allowed' && Object.keys(allowed.headers)).toEqual([
      'RateLimit-Policy',
      'RateLimit',
    ]);
    expect(limited.kind === 'limited' && limited.headers['Retry-After']).toBe('30');
  });

  it('logs a warning that a switch on Object.prototype names', async () => {
    pollute({ TOLLGATE_DOUBLE_COUNT: false });
    const { limiter, warnings } = setup({ warnings: { TOLLGATE_CREATED_IN_HANDLER: false } });
    const request = { ...CLIENT };
    await limiter.check(request);
    await limiter.check(request);
    expect(warnings.join('\n')).toMatch(/TOLLGATE_DOUBLE_COUNT/);
  });

  it('keeps the insurance limiter at the full limit for insurance settings on Object.prototype', async () => {
    pollute({ insurance: { instances: 2 }, instances: 2, onStoreError: 'allow', failOpen: true });
    const { limiter } = setup({}, failingStore(new Error('down')));
    expect(await kinds(limiter, CLIENT, 3)).toEqual(LIMITED_THIRD);
  });
});

describe('with Object.prototype polluted after the limiter is built', () => {
  /** A limiter whose limit is the request's: a limit not seen before builds a limiter for it now. */
  const perPlan = (store?: Store) => setup<PlanRequest>({ limit: (request) => request.limit }, store);

  it('sizes the bucket of a limit first seen now by that limit, not by a burst on Object.prototype', async () => {
    const { limiter } = perPlan();
    pollute({ burst: 1e9 });
    expect(await kinds(limiter, { ...CLIENT, limit: 2 }, 3)).toEqual(LIMITED_THIRD);
  });

  it('bans no one for a ban on Object.prototype when a limit is first seen', async () => {
    const { limiter, clock } = perPlan();
    pollute({ ban: { after: 1, duration: '7d' } });
    expect(await kinds(limiter, { ...CLIENT, limit: 2 }, 3)).toEqual(LIMITED_THIRD);
    clock.nowMs += 60_000;
    expect(await kinds(limiter, { ...CLIENT, limit: 2 }, 1)).toEqual(['allowed']);
  });

  it('keeps the insurance of a limit first seen now at that limit', async () => {
    const { limiter } = perPlan(failingStore(new Error('down')));
    pollute({ insurance: { instances: 2 }, instances: 2 });
    expect(await kinds(limiter, { ...CLIENT, limit: 2 }, 3)).toEqual(LIMITED_THIRD);
  });

  it("takes the limiter's own answer to a store failure, not an onStoreError on Object.prototype", async () => {
    const { limiter } = setup({}, failingStore(new Error('down')));
    pollute({ onStoreError: 'throw' });
    expect(await kinds(limiter, CLIENT, 3)).toEqual(LIMITED_THIRD);
  });
});

describe('createLimiter and its calls', () => {
  it('reads a call of options only for what the caller set', async () => {
    const limiter = createLimiter({ policies: { limit: 2, window: '1m' } });
    pollute({ cost: 3, dryRun: 'yes', onStoreError: 'throw' });
    const allowed = async () => (await limiter.consume('a', {})).allowed;
    expect([await allowed(), await allowed(), await allowed()]).toEqual([true, true, false]);
  });

  it('with limit: 0, reads a call of options only for what the caller set', async () => {
    const limiter = zeroLimiter(resolveZeroLimit({ limit: 0, window: '1m' }, ''), undefined, 'zero');
    pollute({ cost: 7 });
    expect((await limiter.consume('a', {})).cost).toBe(1);
    expect((await limiter.consume('a', { cost: 2 })).cost).toBe(2);
  });

  it('reads a call of options only for what the caller set, also once many calls made it hot', async () => {
    const limiter = createLimiter({ policies: { limit: 1_000_000, window: '1m' } });
    for (let i = 0; i < 20_000; i++) await limiter.consume('a', { cost: 1 });
    pollute({ cost: 2_000_000, dryRun: 'yes' });
    const decision = await limiter.consume('a', {});
    expect([decision.allowed, decision.cost]).toEqual([true, 1]);
  });

  it('reads its options only for what the caller set', async () => {
    pollute({ ban: { after: 1, duration: '7d' }, denyCache: { maxKeys: 'many' } });
    const limiter = createLimiter({ policies: { limit: 1, window: '1m' } });
    expect((await limiter.consume('a')).allowed).toBe(true);
    expect((await limiter.consume('a')).reason).toBe('limited');
    expect((await limiter.consume('a')).reason).toBe('limited');
  });
});

describe('route options', () => {
  it("keeps the app's policies under a route's options when a policy field is on Object.prototype", async () => {
    pollute({ limit: 1_000 });
    const { store } = storeOnClock();
    const { logger } = recordingLogger();
    const merged = mergeRateLimitOptions<RateLimitOptions<FakeRequest>>(
      { policies: { limit: 2, window: '1m' }, store, logger },
      { cost: 1 },
    );
    const limiter = createHttpLimiter(merged as RateLimitOptions<FakeRequest>, fakeAccess, TEST_ADAPTER);
    expect(await kinds(limiter, CLIENT, 3)).toEqual(LIMITED_THIRD);
    // And what the adapter reads of the merge itself (Fastify's `hook`) cannot reach the prototype.
    expect(Object.getPrototypeOf(merged)).toBeNull();
  });
});
