/** The events of the core limiter: decisions, store errors and deny-cache hits, with their documented fields. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  DECISION_CHANNEL,
  DENY_CACHE_HIT_CHANNEL,
  STORE_ERROR_CHANNEL,
} from '../../src/diagnostics/channels.js';
import { createLimiter } from '../../src/limiter/limiter.js';
import type { Store } from '../../src/model/store.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { clockAt, failingStore } from '../http/fixtures.js';
import { record } from './record.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A memory store that says it is remote, so the limiter keeps a deny cache in front of it. */
function remoteStore(clock: () => number): Store {
  const inner = new MemoryStore({ clock });
  return { clock, update: (request) => inner.update(request), reset: (key, p) => inner.reset(key, p) };
}

describe('tollgate:decision from createLimiter', () => {
  it('publishes each consume with limiter, policy, outcome, cost, remaining, store latency and a hashed key', async () => {
    const decisions = record(DECISION_CHANNEL);
    const limiter = createLimiter({
      policies: { limit: 2, window: '1m', name: 'per-minute' },
      namespace: 'jobs',
    });
    await limiter.consume('tenant:acme');
    await limiter.consume('tenant:acme');
    const refused = await limiter.consume('tenant:acme');
    expect(decisions.map((event) => event.outcome)).toEqual(['allowed', 'allowed', 'limited']);
    const last = decisions[2];
    expect(last).toMatchObject({
      limiter: 'jobs',
      policy: 'per-minute',
      outcome: 'limited',
      allowed: false,
      dryRun: false,
      cost: 1,
      remaining: 0,
      keyHash: sha256('jobs/tenant:acme'),
      decision: refused,
    });
    expect(last?.storeLatencyMs).toBeGreaterThanOrEqual(0);
    expect(decisions.map((event) => event.remaining)).toEqual([1, 0, 0]);
  });

  it('never carries the raw key', async () => {
    const decisions = record(DECISION_CHANNEL);
    const limiter = createLimiter({ policies: { limit: 1, window: '1m' }, namespace: 'api' });
    await limiter.consume('sk_live_secret-key');
    expect(JSON.stringify(decisions)).not.toContain('sk_live_secret-key');
    expect(decisions[0]?.keyHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('labels a refusal in dry run dry-run-limited, and charges and decides exactly as without it', async () => {
    const decisions = record(DECISION_CHANNEL);
    const store = new MemoryStore({ clock: clockAt(1_700_000_000_000).now });
    const policies = { limit: 2, window: '1m' };
    const shadow = createLimiter({ store, policies, namespace: 'same' });
    const enforcing = createLimiter({ store, policies, namespace: 'same' });
    const shadowed = [];
    for (let i = 0; i < 3; i++) shadowed.push((await shadow.consume('a', { dryRun: true })).allowed);
    expect(shadowed).toEqual([true, true, false]); // the decision itself is the same as enforcing's
    expect((await enforcing.consume('a')).allowed).toBe(false); // the dry run spent the tokens
    expect(decisions.map((event) => [event.outcome, event.dryRun])).toEqual([
      ['allowed', true],
      ['allowed', true],
      ['dry-run-limited', true],
      ['limited', false],
    ]);
  });

  it('rejects a dryRun that is not a boolean', async () => {
    const limiter = createLimiter({ policies: { limit: 1, window: '1m' } });
    await expect(limiter.consume('a', { dryRun: 'yes' as never })).rejects.toThrow(
      /dryRun must be true or false/,
    );
  });

  it('publishes nothing for peek and refund', async () => {
    const decisions = record(DECISION_CHANNEL);
    const limiter = createLimiter({ policies: { limit: 1, window: '1m' } });
    await limiter.peek('a');
    await limiter.refund('a');
    expect(decisions).toEqual([]);
  });
});

describe('tollgate:store-error', () => {
  it('publishes the failure without the error object, then the degraded decision of the insurance', async () => {
    const errors = record(STORE_ERROR_CHANNEL);
    const decisions = record(DECISION_CHANNEL);
    const failure = Object.assign(new Error('connection lost'), { command: { args: ['tollgate:{jobs/a}'] } });
    const limiter = createLimiter({
      policies: { limit: 5, window: '1m' },
      namespace: 'jobs',
      store: failingStore(failure),
    });
    const decision = await limiter.consume('a');
    expect(decision.degraded).toBe(true);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toEqual({
      limiter: 'jobs',
      operation: 'consume',
      errorType: 'Error',
      message: 'connection lost',
      storeLatencyMs: expect.any(Number),
      keyHash: sha256('jobs/a'),
    });
    expect(decisions[0]).toMatchObject({ outcome: 'degraded', allowed: true, remaining: 4 });
    expect(decisions[0]?.storeLatencyMs).toBeGreaterThanOrEqual(0);
  });

  it('publishes failures of refunds and of checks that throw, with their operation', async () => {
    const errors = record(STORE_ERROR_CHANNEL);
    const decisions = record(DECISION_CHANNEL);
    const limiter = createLimiter({
      policies: { limit: 5, window: '1m' },
      store: failingStore(new TypeError('not a store failure')),
    });
    await expect(limiter.consume('a')).rejects.toThrow(TypeError); // the caller's bug: no event
    const failing = createLimiter({
      policies: { limit: 5, window: '1m' },
      store: failingStore(new Error('down')),
    });
    await expect(failing.consume('a', { onStoreError: 'throw' })).rejects.toThrow('down');
    await expect(failing.refund('a')).rejects.toThrow('down');
    expect(errors.map((event) => event.operation)).toEqual(['consume', 'refund']);
    expect(decisions).toEqual([]); // a check that threw made no decision
  });
});

describe('tollgate:deny-cache-hit', () => {
  it('publishes a denial answered in process, and its decision without store latency', async () => {
    const hits = record(DENY_CACHE_HIT_CHANNEL);
    const decisions = record(DECISION_CHANNEL);
    const clock = clockAt(1_700_000_000_000);
    const limiter = createLimiter({
      store: remoteStore(clock.now),
      policies: { limit: 1, window: '1m', name: 'slow' },
      namespace: 'api',
    });
    await limiter.consume('ip:203.0.113.7');
    await limiter.consume('ip:203.0.113.7'); // the store refuses: the denial is cached
    expect(hits).toEqual([]);
    await limiter.consume('ip:203.0.113.7', { dryRun: true });
    expect(hits).toEqual([
      {
        limiter: 'api',
        policy: 'slow',
        cost: 1,
        retryAfterMs: 60_000,
        keyHash: sha256('api/ip:203.0.113.7'),
      },
    ]);
    expect(decisions.map((event) => [event.outcome, event.storeLatencyMs === undefined])).toEqual([
      ['allowed', false],
      ['limited', false],
      ['dry-run-limited', true],
    ]);
  });
});
