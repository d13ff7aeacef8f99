/** `dryRun` and `dryRunHeaders` on the core HTTP layer, and the decision events of HTTP checks. */
import { describe, expect, it } from 'vitest';
import { DECISION_CHANNEL } from '../../../src/diagnostics/channels.js';
import type { RateLimitOutcome } from '../../../src/http/answer/outcome.js';
import type { RateLimitOptions } from '../../../src/http/options/option-types.js';
import { createHttpLimiter } from '../../../src/http/pipeline/http-limiter.js';
import type { Store } from '../../../src/model/store.js';
import { record } from '../../diagnostics/record.js';
import {
  type FakeRequest,
  failingStore,
  fakeAccess,
  recordingLogger,
  storeOnClock,
  TEST_ADAPTER,
} from '../fixtures.js';

type Options = RateLimitOptions<FakeRequest>;

const CLIENT: FakeRequest = { ip: '203.0.113.7' };

function setup(options: Options, store: Store = storeOnClock().store) {
  const { logger, warnings, errors } = recordingLogger();
  const build = (more: Options) =>
    createHttpLimiter<FakeRequest>(
      { limit: 2, window: '1m', name: 'shadow', store, logger, ...options, ...more },
      fakeAccess,
      TEST_ADAPTER,
    );
  return { limiter: build({}), build, warnings, errors };
}

async function checks(limiter: { check(request: FakeRequest): Promise<RateLimitOutcome> }, count: number) {
  const outcomes: RateLimitOutcome[] = [];
  for (let i = 0; i < count; i++) outcomes.push(await limiter.check({ ...CLIENT }));
  return outcomes;
}

describe('dryRun', () => {
  it('lets every request go on, without headers, and tells the request it was a dry run', async () => {
    const { limiter } = setup({ dryRun: true });
    const outcomes = await checks(limiter, 4);
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['allowed', 'allowed', 'allowed', 'allowed']);
    for (const outcome of outcomes) {
      expect(outcome.kind === 'allowed' && outcome.headers).toEqual({});
      expect(outcome.kind === 'allowed' && outcome.profile).toBe(false);
    }
    const last = outcomes[3] as Extract<RateLimitOutcome, { kind: 'allowed' }>;
    expect(last.info.dryRun).toBe(true);
    expect(last.info.decision.allowed).toBe(false); // what enforcing would have answered
    expect(last.info.remaining).toBe(0);
  });

  it('charges exactly as enforcing: a later enforcing limiter on the same buckets sees the spent tokens', async () => {
    const { limiter, build } = setup({ dryRun: true });
    await checks(limiter, 3); // 2 charged, the 3rd would have been refused and is charged nothing
    const enforcing = build({ dryRun: false });
    expect((await checks(enforcing, 1)).map((outcome) => outcome.kind)).toEqual(['limited']);
  });

  it('counts would-be refusals as dry-run-limited, as many as enforcing refuses for the same traffic', async () => {
    const decisions = record(DECISION_CHANNEL);
    await checks(setup({ dryRun: true, name: 'shadowed' }).limiter, 5);
    await checks(setup({ name: 'enforced' }).limiter, 5);
    const count = (limiter: string, outcome: string) =>
      decisions.filter((event) => event.limiter === limiter && event.outcome === outcome).length;
    expect(count('shadowed', 'dry-run-limited')).toBe(3);
    expect(count('enforced', 'limited')).toBe(3);
    expect(count('shadowed', 'allowed')).toBe(count('enforced', 'allowed'));
    expect(decisions.every((event) => event.dryRun === (event.limiter === 'shadowed'))).toBe(true);
  });

  it('sends the headers enforcing would with dryRunHeaders, but never Retry-After', async () => {
    const { limiter } = setup({ dryRun: true, dryRunHeaders: true, legacyHeaders: true });
    const [first, , refused] = await checks(limiter, 3);
    expect(first?.kind === 'allowed' && first.headers).toMatchObject({ RateLimit: '"2-per-1m";r=1;t=30' });
    expect(refused?.kind).toBe('allowed');
    const headers = refused?.kind === 'allowed' ? refused.headers : {};
    expect(headers).toMatchObject({ RateLimit: '"2-per-1m";r=0;t=30', 'X-RateLimit-Remaining': '0' });
    expect(headers['Retry-After']).toBeUndefined();
    expect(refused?.kind === 'allowed' && refused.profile).toBe('draft-11');
  });

  it('may be a function of the request, sync or async', async () => {
    const { limiter } = setup({ dryRun: async (request) => request.plan === 'pro' });
    expect((await checks(limiter, 2)).map((outcome) => outcome.kind)).toEqual(['allowed', 'allowed']);
    expect((await limiter.check({ ...CLIENT, plan: 'pro' })).kind).toBe('allowed');
    expect((await limiter.check({ ...CLIENT })).kind).toBe('limited');
  });

  it('throws at construction on a bad value, and on a function that returns a non-boolean', async () => {
    expect(() => setup({ dryRun: 'yes' as never })).toThrow('@tollgate/test: dryRun must be true, false');
    expect(() => setup({ dryRunHeaders: 1 as never })).toThrow('@tollgate/test: dryRunHeaders must be');
    const { limiter } = setup({ dryRun: () => 'yes' as never });
    await expect(limiter.check({ ...CLIENT })).rejects.toThrow(
      'the dryRun function must return true or false',
    );
  });

  it('calls onExceeded for a would-be refusal, and never throws it with throwOnLimit', async () => {
    const exceeded: boolean[] = [];
    const { limiter } = setup({
      dryRun: true,
      throwOnLimit: true,
      onExceeded: (_request, info) => exceeded.push(info.dryRun),
    });
    expect((await checks(limiter, 3)).map((outcome) => outcome.kind)).toEqual([
      'allowed',
      'allowed',
      'allowed',
    ]);
    expect(exceeded).toEqual([true]);
  });

  it('lets limit 0 and a cost beyond capacity through', async () => {
    const decisions = record(DECISION_CHANNEL);
    const closed = setup({ dryRun: true, limit: 0, name: 'closed' }).limiter;
    const costly = setup({ dryRun: true, cost: 5, name: 'costly' }).limiter;
    expect((await checks(closed, 1))[0]?.kind).toBe('allowed');
    expect((await checks(costly, 1))[0]?.kind).toBe('allowed');
    expect(decisions.map((event) => [event.limiter, event.outcome])).toEqual([
      ['closed', 'dry-run-limited'],
      ['costly', 'dry-run-limited'],
    ]);
  });

  it("does not fail a request when the store fails and onStoreError is 'deny'", async () => {
    const decisions = record(DECISION_CHANNEL);
    const store = failingStore(new Error('down'));
    const { limiter } = setup({ dryRun: true, onStoreError: 'deny' }, store);
    expect((await limiter.check({ ...CLIENT })).kind).toBe('skipped');
    const enforcing = setup({ onStoreError: 'deny', name: 'enforced' }, store).limiter;
    expect((await enforcing.check({ ...CLIENT })).kind).toBe('error');
    expect(decisions.map((event) => [event.outcome, event.allowed, event.dryRun])).toEqual([
      ['degraded', false, true],
      ['degraded', false, false],
    ]);
  });

  it('logs would-be refusals at most once per 10 s per limiter, with the count left out', async () => {
    const { limiter, warnings } = setup({ dryRun: true });
    await checks(limiter, 6);
    expect(warnings).toEqual([
      '[TOLLGATE_DRY_RUN_LIMITED] dry run: limiter shadow would have refused a request (policy 2-per-1m) and let it through',
    ]);
  });
});

describe('tollgate:decision from HTTP limiters', () => {
  it('publishes skipped requests (skip, allowList) without a decision or key', async () => {
    const decisions = record(DECISION_CHANNEL);
    const skipping = setup({ skip: (request) => request.plan === 'pro', allowList: ['198.51.100.1'] });
    await skipping.limiter.check({ ...CLIENT, plan: 'pro' });
    await skipping.limiter.check({ ip: '198.51.100.1' });
    expect(decisions).toEqual([
      expect.objectContaining({ limiter: 'shadow', outcome: 'skipped', allowed: true, decision: undefined }),
      expect.objectContaining({ outcome: 'skipped', policy: undefined, cost: undefined, keyHash: undefined }),
    ]);
  });

  it("publishes a store failure answered with 'allow' as degraded, allowed, with its latency", async () => {
    const decisions = record(DECISION_CHANNEL);
    const { limiter } = setup({ onStoreError: () => 'allow' }, failingStore(new Error('down')));
    expect((await limiter.check({ ...CLIENT })).kind).toBe('skipped');
    expect(decisions).toEqual([
      expect.objectContaining({ outcome: 'degraded', allowed: true, cost: 1, decision: undefined }),
    ]);
    expect(decisions[0]?.storeLatencyMs).toBeGreaterThanOrEqual(0);
    expect(decisions[0]?.keyHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('publishes one decision per checked request: the core limiter publishes it, the HTTP layer does not again', async () => {
    const decisions = record(DECISION_CHANNEL);
    await checks(setup({}).limiter, 3);
    expect(decisions.map((event) => event.outcome)).toEqual(['allowed', 'allowed', 'limited']);
  });
});
