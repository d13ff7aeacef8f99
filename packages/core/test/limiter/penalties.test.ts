/** exponentialBackoff and continueExceeding: their options, their rule, and what they do to stored keys. */
import { describe, expect, it } from 'vitest';
import { resolvePolicies } from '../../src/algorithms/policies.js';
import { settlePolicies, stateFieldCount } from '../../src/algorithms/settle.js';
import { createLimiter } from '../../src/limiter/limiter.js';
import { refusalRule } from '../../src/limiter/limiter-options.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { policySetKey } from '../../src/stores/policy-set-key.js';

const policies = { limit: 1, window: '1s' } as const;

describe('the penalty options', () => {
  it.each(['exponentialBackoff', 'continueExceeding'])('take %s as true or false only', (option) => {
    expect(() => createLimiter({ policies, [option]: true })).not.toThrow();
    expect(() => createLimiter({ policies, [option]: false })).not.toThrow();
    expect(() => createLimiter({ policies, [option]: 'yes' as never })).toThrow(
      `${option} must be true or false; got 'yes'`,
    );
  });

  it('make one rule with the ban, or none when all are off', () => {
    expect(refusalRule(undefined, false, undefined, '')).toBeUndefined();
    expect(refusalRule({ after: 2, duration: '1m' }, false, false, '')).toEqual({
      after: 2,
      durationMs: 60_000,
    });
    expect(refusalRule({ after: 2, duration: '1m' }, true, false, '')).toEqual({
      after: 2,
      durationMs: 60_000,
      exponentialBackoff: true,
      continueExceeding: false,
    });
    expect(Object.isFrozen(refusalRule(undefined, false, true, ''))).toBe(true);
  });
});

describe('the rule and the stored state', () => {
  const resolved = resolvePolicies(policies);

  it('keeps a ban alone under the keys it had, and penalties under others', () => {
    const ban = { after: 2, durationMs: 60_000 };
    const again = { after: 2, durationMs: 60_000 };
    const backoff = { ...ban, exponentialBackoff: true, continueExceeding: false };
    expect(policySetKey(resolved, again)).toBe(policySetKey(resolved, ban));
    expect(policySetKey(resolved, backoff)).not.toBe(policySetKey(resolved, ban));
  });

  it('takes three more fields for a backoff, none for continueExceeding', () => {
    const rule = (exponentialBackoff: boolean, after = 0) => ({
      after,
      durationMs: after,
      exponentialBackoff,
    });
    expect(stateFieldCount(resolved, rule(false))).toBe(2);
    expect(stateFieldCount(resolved, rule(true))).toBe(5);
    expect(stateFieldCount(resolved, rule(true, 3))).toBe(7);
  });

  it('writes a refusal only when a rule counts it', () => {
    const st = new Float64Array(5);
    const backoff = { after: 0, durationMs: 0, exponentialBackoff: true };
    settlePolicies(resolved, st, false, 1, 'consume', 1_000, backoff);
    expect(settlePolicies(resolved, st, true, 1, 'consume', 1_000)).toMatchObject({ keepMs: undefined });
    const refused = settlePolicies(resolved, st, true, 1, 'consume', 1_000, backoff);
    expect(refused).toMatchObject({ applied: false, backoffUntilMs: 2_000, keepMs: 1_000 });
    expect(Array.from(st)).toEqual([0, 1_000, 1, 2_000, 1_000]); // [level, at], [refusals, until, base]
  });
});

describe('a limiter with penalties', () => {
  it('answers both in retryAfterMs, the source of Retry-After and the RateLimit header’s t', async () => {
    const clock = { nowMs: 1_000_000, now: () => clock.nowMs };
    const store = new MemoryStore({ clock: clock.now });
    const limiter = createLimiter({ store, policies, exponentialBackoff: true, continueExceeding: true });
    await limiter.consume('k');
    // continueExceeding charges the refused token as debt, so the second refusal's base is 2 s.
    const waits = [];
    for (let i = 0; i < 3; i++) waits.push((await limiter.consume('k')).retryAfterMs);
    expect(waits).toEqual([2_000, 4_000, 8_000]);
    clock.nowMs += 8_000;
    expect((await limiter.consume('k')).allowed).toBe(true);
  });
});
