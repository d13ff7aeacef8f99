/**
 * The rate-limit headers mean what the drafts say, property-tested: random policies (bursts, windows below
 * a second, several at once), random whole costs and random timings, through every framework driver on both
 * stores, on a hand-moved clock. A seeded PRNG makes every run the same; a failure names its seed and trial
 * (rerun one with TOLLGATE_SEED=<seed>).
 */
import { type HeaderProfile, MemoryStore, type Policy, RedisStore, type Store } from '@tollgate/core';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { connectRedis, uniquePrefix } from '../harness/clients.js';
import { type ManualClock, manualClock } from '../harness/manual-clock.js';
import { seeded } from '../harness/seeded.js';
import type { FrameworkDriver, TestApp, TestResponse } from './app-spec.js';
import { drivers } from './drivers.js';
import { nestDrivers } from './nestjs-drivers.js';
import { jsonBody, parseRateLimitFields } from './parse-headers.js';
import { webDrivers } from './web-drivers.js';

const SEED = Number(process.env.TOLLGATE_SEED ?? 20_260_523);
const TRIALS = 6;
const STEPS = 14;
/** A cost no policy of a trial can hold: refused uncharged, its headers show every bucket as it is. */
const PROBE_COST = 1_000_000;

const WINDOWS_MS = [250, 500, 1500, 1000, 2000, 10_000, 60_000];
const PROFILES: readonly HeaderProfile[] = ['draft-11', 'draft-11', 'draft-10', 'draft-7', 'draft-6'];

const redis: Redis = await connectRedis();
afterAll(() => redis.disconnect());

const stores: { name: string; create(clock: () => number): Store }[] = [
  { name: 'MemoryStore', create: (clock) => new MemoryStore({ clock }) },
  {
    name: 'RedisStore',
    create: (clock) => new RedisStore({ client: redis, prefix: uniquePrefix('semantics'), clock }),
  },
];

/** One seed per framework, store and trial, so each trial reproduces on its own. */
function seedOf(...parts: (string | number)[]): number {
  let hash = 2_166_136_261;
  for (const char of parts.join('/')) hash = Math.imul(hash ^ char.charCodeAt(0), 16_777_619);
  return hash >>> 0;
}

interface ResolvedTestPolicy {
  readonly name: string;
  readonly limit: number;
  readonly windowMs: number;
  readonly capacity: number;
}

interface Trial {
  readonly profile: HeaderProfile;
  readonly policies: readonly ResolvedTestPolicy[];
  readonly random: () => number;
  readonly int: (min: number, max: number) => number;
}

function trialOf(seed: number): Trial {
  const random = seeded(seed);
  const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
  const profile = PROFILES[int(0, PROFILES.length - 1)] as HeaderProfile;
  const policies = Array.from({ length: int(1, 3) }, (_, i) => {
    const limit = int(1, 12);
    return {
      name: `p${i}`,
      limit,
      windowMs: WINDOWS_MS[int(0, WINDOWS_MS.length - 1)] as number,
      capacity: random() < 0.5 ? limit : int(1, 3 * limit),
    };
  });
  return { profile, policies, random, int };
}

/** The policy a draft-6/7 `RateLimit-Policy` item or a draft-10/11 member advertises, checked against the real one. */
function expectTrueQuota(policy: ResolvedTestPolicy, params: Record<string, unknown>, quota: number): void {
  const w = params.w as number;
  expect(Number.isInteger(w) && w >= 1, 'w is whole seconds').toBe(true);
  // q per w is exactly the refill rate, limit per window.
  expect(quota * policy.windowMs, `q=${quota};w=${w} is ${policy.limit} per ${policy.windowMs} ms`).toBe(
    policy.limit * w * 1000,
  );
  expect(params['tollgate-burst'], 'the capacity, when it is not q').toBe(
    policy.capacity === quota ? undefined : policy.capacity,
  );
}

type Members = Record<string, Record<string, number>>;

/** Checks the fields of one answer; returns the draft-10/11 `RateLimit` members, if the profile has them. */
function checkFields(trial: Trial, response: TestResponse): Members | undefined {
  const fields = parseRateLimitFields(response);
  if (trial.profile === false) return undefined;
  const byName = new Map(trial.policies.map((p) => [p.name, p]));
  if (trial.profile === 'draft-11' || trial.profile === 'draft-10') {
    const advertised = fields['ratelimit-policy'] as Members;
    expect(Object.keys(advertised)).toEqual(trial.policies.map((p) => p.name));
    for (const [name, params] of Object.entries(advertised))
      expectTrueQuota(byName.get(name) as ResolvedTestPolicy, params, params.q as number);
    const state = fields.ratelimit as Members;
    for (const [name, { r, t }] of Object.entries(state)) {
      expect(r, `${name}: r never exceeds the capacity`).toBeLessThanOrEqual(
        byName.get(name)?.capacity as number,
      );
      expect(t, `${name}: t is a positive whole number of seconds`).toBeGreaterThanOrEqual(1);
    }
    return state;
  }
  // draft-6/7: one policy, the one that decided.
  const [[quota, params]] = Object.entries(fields['ratelimit-policy'] as Members) as [
    [string, Members[string]],
  ];
  const limit =
    trial.profile === 'draft-7' ? (fields.ratelimit as { limit: number }).limit : fields['ratelimit-limit'];
  expect(limit, 'the limit is the advertised quota').toBe(Number(quota));
  expect(
    trial.policies.some((p) => {
      try {
        expectTrueQuota(p, params, Number(quota));
        return true;
      } catch {
        return false;
      }
    }),
    `${quota};${JSON.stringify(params)} advertises one of the policies truly`,
  ).toBe(true);
  return undefined;
}

function resetOf(trial: Trial, response: TestResponse): number | undefined {
  const fields = parseRateLimitFields(response);
  if (trial.profile === 'draft-7') return (fields.ratelimit as { reset: number }).reset;
  if (trial.profile === 'draft-6') return fields['ratelimit-reset'] as number;
  return undefined;
}

interface Run {
  readonly app: TestApp;
  readonly clock: ManualClock;
  readonly trial: Trial;
  send(cost: number): Promise<TestResponse>;
}

/** A 429: Retry-After is no earlier than t, equals reset, and is exactly the wait: 1 s less is not enough. */
async function checkRefusal(run: Run, refused: TestResponse, cost: number): Promise<TestResponse> {
  const { trial, clock, send } = run;
  const retryAfter = parseRateLimitFields(refused)['retry-after'] as number;
  expect(retryAfter, 'a 429 has Retry-After').toBeGreaterThanOrEqual(1);
  const state = checkFields(trial, refused);
  for (const [name, { r, t }] of Object.entries(state ?? {}) as [string, { r: number; t: number }][]) {
    // Every policy that was short (the deciding one among them) ends its effective window in time.
    if (r < cost) expect(retryAfter, `Retry-After ≥ t of ${name}`).toBeGreaterThanOrEqual(t);
  }
  if (trial.profile === 'draft-7' || trial.profile === 'draft-6') {
    expect(resetOf(trial, refused), 'reset is the point in time of Retry-After').toBe(retryAfter);
  }
  clock.advance((retryAfter - 1) * 1000);
  const early = await send(cost);
  expect(early.status, `waiting ${retryAfter - 1} s of Retry-After ${retryAfter} is not enough`).toBe(429);
  clock.advance(1000);
  const onTime = await send(cost);
  expect(onTime.status, `waiting Retry-After ${retryAfter} s is enough`).toBe(200);
  return onTime;
}

/** After waiting `t` seconds, `r` has grown, unless the bucket is full. Probes without charging. */
async function checkEffectiveWindow(run: Run, state: Members): Promise<void> {
  const { trial, clock, send } = run;
  const growing = trial.policies.filter((p) => (state[p.name]?.r as number) < p.capacity);
  if (growing.length === 0) return;
  const policy = growing[trial.int(0, growing.length - 1)] as ResolvedTestPolicy;
  const { r, t } = state[policy.name] as { r: number; t: number };
  clock.advance(t * 1000);
  const probe = await send(PROBE_COST);
  expect(probe.status).toBe(403);
  const after = checkFields(trial, probe) as Members;
  expect(after[policy.name]?.r, `${policy.name}: r=${r} has grown after t=${t} s`).toBeGreaterThan(r);
}

async function runTrial(
  driver: FrameworkDriver,
  trial: Trial,
  store: Store,
  clock: ManualClock,
): Promise<void> {
  const policies: Policy[] = trial.policies.map((p) => ({
    name: p.name,
    limit: p.limit,
    window: p.windowMs,
    burst: p.capacity,
  }));
  const read = driver.reader;
  const app = await driver.build({
    global: {
      name: 'semantics',
      policies,
      store,
      headers: trial.profile,
      cost: (req) => Number(read.header(req, 'x-cost') ?? 1),
    },
  });
  const send = (cost: number) => app.send('GET', '/a', { 'x-cost': String(cost) });
  const run: Run = { app, clock, trial, send };
  const smallest = Math.min(...trial.policies.map((p) => p.capacity));
  const longestWindow = Math.max(...trial.policies.map((p) => p.windowMs));
  try {
    for (let step = 0; step < STEPS; step++) {
      const pause = trial.random();
      clock.advance(pause < 0.4 ? 0 : pause < 0.8 ? trial.int(1, 1500) : trial.int(1, longestWindow));
      const cost = trial.random() < 0.08 ? smallest + trial.int(1, 3) : trial.int(1, smallest);
      let response = await send(cost);
      if (response.status === 403) {
        expect(cost, 'only a cost beyond a capacity is a 403').toBeGreaterThan(smallest);
        expect(response.headers['retry-after'], 'no wait will do: no Retry-After').toBeUndefined();
        expect(jsonBody(response).type).toMatch(/#cost-exceeds-capacity$/);
        checkFields(trial, response);
        continue;
      }
      if (response.status === 429) response = await checkRefusal(run, response, cost);
      expect(response.status).toBe(200);
      expect(response.headers['retry-after']).toBeUndefined();
      const state = checkFields(trial, response);
      if (state && trial.random() < 0.5) await checkEffectiveWindow(run, state);
    }
  } finally {
    await app.close();
  }
}

describe.each([...drivers, ...webDrivers, ...nestDrivers])('$name', (driver) => {
  describe.each(stores)('on $name', (storeSetup) => {
    it(`keeps RateLimit, RateLimit-Policy, reset and Retry-After true (seed ${SEED}, ${TRIALS} trials)`, async () => {
      for (let i = 0; i < TRIALS; i++) {
        const trial = trialOf(seedOf(SEED, driver.name, storeSetup.name, i));
        const clock = manualClock();
        try {
          await runTrial(driver, trial, storeSetup.create(clock.now), clock);
        } catch (error) {
          const setup = `${String(trial.profile)} ${JSON.stringify(trial.policies)}`;
          if (error instanceof Error) error.message = `[seed ${SEED}, trial ${i}: ${setup}] ${error.message}`;
          throw error;
        }
      }
    });
  });
});
