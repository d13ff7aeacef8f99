/**
 * Bounded waits (`consume` with `maxWait`, and `schedule`), run unchanged against every store: turns
 * handed out in the order the store saw them, refused at once past `maxWait`, given back on abort, the
 * longest of several policies, many waiters on one key in one batch, and a key's override. Each builds its limiter on the
 * fixture's store with a sleep the scenario ends itself, so no real time passes.
 */
import { createLimiter, type Decision, type Limiter, type Policy } from '@tollgate/core';
import { expect } from 'vitest';
import type { Scenario } from './scenarios.js';
import type { StoreFixture } from './store-fixtures.js';

/** A limiter on the fixture's store whose waiters sleep until `wakeAll` (their sleeps' ms in `sleeps`). */
function waiting(fixture: StoreFixture, policies: Policy | Policy[], overrides = false) {
  const sleeps: { ms: number; wake(): void }[] = [];
  const limiter = createLimiter({
    store: fixture.store,
    policies,
    overrides,
    onStoreError: 'throw',
    sleep: (ms) => new Promise<void>((wake) => sleeps.push({ ms, wake })),
  });
  return {
    limiter,
    sleeps,
    /** Ends every sleep so far, as if the clock had reached every turn. */
    wakeAll() {
      for (const { wake } of sleeps) wake();
    },
  };
}

/** Resolves once `sleeping()` waiters have had their store answer and begun to sleep. */
async function untilSleeping(sleeps: readonly unknown[], sleeping: number): Promise<void> {
  const deadlineMs = Date.now() + 10_000;
  while (sleeps.length < sleeping) {
    if (Date.now() > deadlineMs) throw new Error(`${sleeps.length} waiters sleeping, not ${sleeping}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

async function spend(limiter: Limiter, times: number): Promise<void> {
  for (let i = 0; i < times; i++) expect((await limiter.consume('k')).allowed).toBe(true);
}

/** The scenario's own limiter is not used: each builds one with a sleep it controls. */
const unused: Policy = { limit: 1, window: '1s' };

export const waitScenarios: Scenario[] = [
  {
    name: 'waits: turns in store order, each maxWait kept; past it refused at once with the wait needed',
    policies: unused,
    async run(_limiter, fixture) {
      const { limiter, sleeps, wakeAll } = waiting(fixture, { limit: 10, window: '1s' });
      await spend(limiter, 10);
      const first = await limiter.consume('k', { maxWait: 0 });
      expect(first).toMatchObject({ allowed: false, retryAfterMs: 100 });
      // One after another, so the store sees them in this order.
      const calls: Promise<Decision>[] = [limiter.consume('k', { maxWait: 250 })];
      await untilSleeping(sleeps, 1);
      calls.push(limiter.consume('k', { maxWait: 250 }));
      await untilSleeping(sleeps, 2);
      calls.push(limiter.consume('k', { maxWait: 250 }));
      await calls[2];
      expect(sleeps.map((s) => s.ms)).toEqual([100, 200]);
      // A plain check is behind them: its token comes after theirs.
      expect(await limiter.consume('k')).toMatchObject({ allowed: false, retryAfterMs: 300 });
      wakeAll();
      const decisions = await Promise.all(calls);
      expect(decisions.map((d) => [d.allowed, d.waitedMs, d.retryAfterMs])).toEqual([
        [true, 100, 0],
        [true, 200, 0],
        [false, undefined, 300],
      ]);
      fixture.clock.advance(300);
      expect(await limiter.consume('k')).toMatchObject({ allowed: true });
    },
  },
  {
    name: 'waits: an aborted waiter gives back its charge less what refilled since its decision',
    policies: unused,
    async run(_limiter, fixture) {
      const { limiter, sleeps } = waiting(fixture, { limit: 10, window: '1s', burst: 1 });
      await spend(limiter, 1);
      const controller = new AbortController();
      const aborted = limiter.consume('k', { maxWait: '1s', signal: controller.signal });
      await untilSleeping(sleeps, 1);
      expect(sleeps.map((s) => s.ms)).toEqual([100]);
      fixture.clock.advance(40);
      controller.abort(new Error('client hung up'));
      await expect(aborted).rejects.toThrow('client hung up');
      // Its token less the 40 ms refilled since: the next is due 100 ms from now, not 160 (behind it).
      expect(await limiter.peek('k')).toMatchObject({ allowed: false, retryAfterMs: 100 });
    },
  },
  {
    name: 'waits: several policies, the longest wait, every policy charged',
    policies: unused,
    async run(_limiter, fixture) {
      const { limiter, sleeps, wakeAll } = waiting(fixture, [
        { limit: 10, window: '1s', burst: 1, name: 'fast' },
        { limit: 2, window: '1s', burst: 1, name: 'slow' },
      ]);
      await spend(limiter, 1);
      const call = limiter.consume('k', { maxWait: '1s' });
      await untilSleeping(sleeps, 1);
      // A second would need the slow policy's 1000 ms: refused, although the fast one has room.
      expect(await limiter.consume('k', { maxWait: 999 })).toMatchObject({
        allowed: false,
        retryAfterMs: 1000,
      });
      expect(sleeps.map((s) => s.ms)).toEqual([500]);
      wakeAll();
      const decision = await call;
      expect(decision).toMatchObject({ allowed: true, waitedMs: 500 });
      expect(decision.policies.map((p) => p.resetMs)).toEqual([200, 1000]);
    },
  },
  {
    name: 'waits: 10 callers at once on one key: 8 distinct turns, one per token, within maxWait',
    policies: unused,
    async run(_limiter, fixture) {
      const { limiter, sleeps, wakeAll } = waiting(fixture, { limit: 20, window: '1s', burst: 2 });
      const calls = Array.from({ length: 10 }, () => limiter.consume('k', { maxWait: 300 }));
      await untilSleeping(sleeps, 6);
      wakeAll();
      const decisions = await Promise.all(calls);
      const turns = decisions.filter((d) => d.allowed).map((d) => d.waitedMs);
      // 2 at once from the bucket, then one every 50 ms up to 300 ms.
      expect(turns.sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual([0, 0, 50, 100, 150, 200, 250, 300]);
      for (const refused of decisions.filter((d) => !d.allowed)) {
        expect(refused.retryAfterMs).toBeGreaterThan(300);
      }
    },
  },
  {
    name: 'schedule: runs its function at its turn, or not at all when no turn comes within maxWait',
    policies: unused,
    async run(_limiter, fixture) {
      const { limiter, sleeps, wakeAll } = waiting(fixture, { limit: 10, window: '1s', burst: 1 });
      const ran: number[] = [];
      expect(await limiter.schedule('k', () => ran.push(1))).toBe(1);
      const second = limiter.schedule('k', () => ran.push(2), { maxWait: 150 });
      await untilSleeping(sleeps, 1);
      await expect(limiter.schedule('k', () => ran.push(3), { maxWait: 150 })).rejects.toMatchObject({
        code: 'TOLLGATE_RATE_LIMITED',
        decision: { retryAfterMs: 200 },
      });
      expect(ran).toEqual([1]);
      wakeAll();
      expect(await second).toBe(2);
      expect(ran).toEqual([1, 2]);
    },
  },
  {
    name: 'waits: by a key’s override, when one is in force',
    policies: unused,
    async run(_limiter, fixture) {
      const { limiter, sleeps, wakeAll } = waiting(fixture, { limit: 10, window: '1s', burst: 1 }, true);
      await limiter.setOverride('k', { limit: 40, burst: 1 });
      await spend(limiter, 1);
      const call = limiter.consume('k', { maxWait: '1s' });
      await untilSleeping(sleeps, 1);
      expect(sleeps.map((s) => s.ms)).toEqual([25]);
      wakeAll();
      expect(await call).toMatchObject({ allowed: true, waitedMs: 25 });
      await limiter.removeOverride('k');
      const other = limiter.consume('other', { maxWait: '1s' });
      expect(await other).toMatchObject({ allowed: true, waitedMs: 0 });
    },
  },
];
