import { describe, expect, it } from 'vitest';
import { decide } from '../../../src/algorithms/decide.js';
import { resolvePolicies } from '../../../src/algorithms/policies.js';
import {
  COST_EXCEEDS_CAPACITY_TYPE,
  costExceedsCapacityProblem,
  PROBLEM_JSON,
  problemDetails,
  QUOTA_EXCEEDED_TYPE,
  quotaExceededProblem,
  refusalStatus,
} from '../../../src/http/answer/problem.js';
import { createLimiter } from '../../../src/limiter/limiter.js';
import { storeOnClock } from '../fixtures.js';

const POLICIES = [
  { limit: 2, window: '1s', name: 'second' },
  { limit: 5, window: '1m', name: 'minute' },
  { limit: 100, window: '1h', name: 'hour' },
] as const;

function limiterOnClock() {
  const { clock, store } = storeOnClock();
  return { clock, limiter: createLimiter({ store, policies: POLICIES }) };
}

describe('quotaExceededProblem', () => {
  it('is an RFC 9457 quota-exceeded problem with status 429', async () => {
    const { limiter } = limiterOnClock();
    await limiter.consume('a', { cost: 2 });
    const problem = quotaExceededProblem(await limiter.consume('a'));
    expect(PROBLEM_JSON).toBe('application/problem+json');
    expect(problem).toMatchObject({
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
      title: 'Request cannot be satisfied as assigned quota has been exceeded',
      status: 429,
    });
    expect(problem.type).toBe(QUOTA_EXCEEDED_TYPE);
    expect(JSON.parse(JSON.stringify(problem))).toEqual(problem);
  });

  it('lists exactly the policies that were short, in policy order', async () => {
    const { clock, limiter } = limiterOnClock();
    await limiter.consume('a', { cost: 2 });
    clock.nowMs += 1000; // 'second' is full again, 'minute' has 3 tokens and a bit, 'hour' 98
    await limiter.consume('a', { cost: 2 });
    const denied = await limiter.consume('a', { cost: 2 }); // 'second' has 0, 'minute' 1, 'hour' 96
    expect(denied.allowed).toBe(false);
    expect(quotaExceededProblem(denied)['violated-policies']).toEqual(['second', 'minute']);
  });

  it('says how many whole seconds to wait, rounded up', async () => {
    const { clock, store } = storeOnClock();
    const limiter = createLimiter({ store, policies: { limit: 5, window: '1m' } });
    await limiter.consume('a', { cost: 5 }); // empty: one token per 12 s
    clock.nowMs += 1;
    const denied = await limiter.consume('a');
    expect(denied.retryAfterMs).toBe(11_999);
    expect(quotaExceededProblem(denied).detail).toBe('Too many requests: retry in 12 seconds.');
  });

  it('says when no wait will do because the cost exceeds a capacity', async () => {
    const { limiter } = limiterOnClock();
    const denied = await limiter.consume('a', { cost: 3 });
    expect(denied.reason).toBe('cost-exceeds-capacity');
    const problem = quotaExceededProblem(denied);
    expect(problem.detail).toBe("This request costs 3 tokens, more than policy 'second' can ever hold (2).");
    expect(problem['violated-policies']).toEqual(['second']);
  });

  it('lists a policy that can never hold the cost alongside ones that are merely short', () => {
    const policies = resolvePolicies([
      { limit: 1, window: '1s', name: 'tiny' },
      { limit: 10, window: '1m', name: 'drained' },
      { limit: 100, window: '1h', name: 'plenty' },
    ]);
    const nowMs = 1_700_000_000_000;
    const states = [1_000, 0, 100 * 3_600_000].map((level) => [level, nowMs]); // full, empty, full
    const decision = decide(policies, { applied: false, nowMs, states }, 2);
    expect(quotaExceededProblem(decision)['violated-policies']).toEqual(['tiny', 'drained']);
  });

  it('says the same number of seconds as Retry-After, even when t makes that longer than the wait', async () => {
    const { store } = storeOnClock();
    const limiter = createLimiter({ store, policies: { limit: 1, window: '2s' } });
    await limiter.consume('a');
    const denied = await limiter.consume('a', { cost: 0.5 }); // half a token in 1 s; r grows in 2 s
    expect(quotaExceededProblem(denied).detail).toBe('Too many requests: retry in 2 seconds.');
  });
});

describe('costExceedsCapacityProblem', () => {
  it('is a 403 problem of its own type, listing only the policies that can never hold the cost', async () => {
    const { limiter } = limiterOnClock();
    await limiter.consume('a', { cost: 2 }); // 'second' empty, 'minute' 3 left
    const denied = await limiter.consume('a', { cost: 4 }); // 'second' holds 2 at most; 'minute' is merely short
    expect(denied.reason).toBe('cost-exceeds-capacity');
    expect(refusalStatus(denied)).toBe(403);
    expect(problemDetails(denied)).toEqual(costExceedsCapacityProblem(denied));
    expect(costExceedsCapacityProblem(denied)).toEqual({
      type: COST_EXCEEDS_CAPACITY_TYPE,
      title: 'Request costs more than a quota policy can ever allow',
      status: 403,
      detail: "This request costs 4 tokens, more than policy 'second' can ever hold (2).",
      'violated-policies': ['second'],
      cost: 4,
    });
  });

  it('is not used for requests a wait will let through', async () => {
    const { limiter } = limiterOnClock();
    await limiter.consume('a', { cost: 2 });
    const denied = await limiter.consume('a');
    expect(refusalStatus(denied)).toBe(429);
    expect(problemDetails(denied)).toEqual(quotaExceededProblem(denied));
  });
});
