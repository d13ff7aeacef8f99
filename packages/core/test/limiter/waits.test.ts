/**
 * Bounded waits on the MemoryStore under an injected clock and sleep: admitted at once when the tokens
 * are there, a turn handed out within `maxWait`, refused at once past it; aborts give the turn back;
 * the waiters' cap; options checked.
 */
import { describe, expect, it } from 'vitest';
import { createLimiter } from '../../src/limiter/limiter.js';
import type { LimiterOptions } from '../../src/limiter/limiter-options.js';
import { TurnRefusedError } from '../../src/limiter/turn-refused-error.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';

/** A clock that moves when told, and a sleep that ends when the test says so. */
function manualTime() {
  let nowMs = 1_767_225_600_000;
  const sleeps: { ms: number; wake(): void }[] = [];
  return {
    now: () => nowMs,
    advance(ms: number) {
      nowMs += ms;
    },
    sleeps,
    sleep: (ms: number) =>
      new Promise<void>((resolve) => {
        sleeps.push({ ms, wake: resolve });
      }),
  };
}

function limiterWith(options: Partial<LimiterOptions> & Pick<LimiterOptions, 'policies'>) {
  const time = manualTime();
  const limiter = createLimiter({
    store: new MemoryStore({ clock: time.now }),
    sleep: time.sleep,
    ...options,
  });
  return { limiter, time };
}

/** Whether `promise` has settled, after every pending reaction has run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('consume with maxWait on the MemoryStore', () => {
  it('admits at once, with no sleep, when the tokens are there', async () => {
    const { limiter, time } = limiterWith({ policies: { limit: 10, window: '1s' } });
    const decision = await limiter.consume('k', { maxWait: '1s' });
    expect(decision).toMatchObject({ allowed: true, waitedMs: 0, retryAfterMs: 0 });
    expect(time.sleeps).toEqual([]);
  });

  it('hands out turns in order, each resolving only when its sleep ends; refuses at once past maxWait', async () => {
    // 10 per second: a token every 100 ms.
    const { limiter, time } = limiterWith({ policies: { limit: 10, window: '1s' } });
    for (let i = 0; i < 10; i++) expect((await limiter.consume('k')).allowed).toBe(true);
    const first = limiter.consume('k', { maxWait: 250 });
    const second = limiter.consume('k', { maxWait: 250 });
    const third = limiter.consume('k', { maxWait: 250 });
    // The third would need 300 ms: refused at once, saying so.
    expect(await third).toMatchObject({ allowed: false, reason: 'limited', retryAfterMs: 300 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(time.sleeps.map((s) => s.ms)).toEqual([100, 200]);
    expect(await settled(first)).toBe(false);
    time.advance(100);
    time.sleeps[0]?.wake();
    expect(await first).toMatchObject({ allowed: true, waitedMs: 100 });
    expect(await settled(second)).toBe(false);
    time.advance(100);
    time.sleeps[1]?.wake();
    expect(await second).toMatchObject({ allowed: true, waitedMs: 200 });
  });

  it('queues a plain check behind the waiters: it is refused until their turns have passed', async () => {
    const { limiter, time } = limiterWith({ policies: { limit: 10, window: '1s', burst: 1 } });
    await limiter.consume('k');
    void limiter.consume('k', { maxWait: '1s' });
    void limiter.consume('k', { maxWait: '1s' });
    expect(await limiter.consume('k')).toMatchObject({ allowed: false, retryAfterMs: 300 });
    time.advance(300);
    expect(await limiter.consume('k')).toMatchObject({ allowed: true });
    for (const { wake } of time.sleeps) wake();
  });

  it('gives an aborted waiter’s turn back, and rejects with the abort’s reason', async () => {
    const { limiter, time } = limiterWith({ policies: { limit: 10, window: '1s', burst: 1 } });
    await limiter.consume('k');
    const controller = new AbortController();
    const aborted = limiter.consume('k', { maxWait: '1s', signal: controller.signal });
    await new Promise((resolve) => setImmediate(resolve));
    expect(time.sleeps.map((s) => s.ms)).toEqual([100]);
    time.advance(40);
    controller.abort(new Error('client hung up'));
    await expect(aborted).rejects.toThrow('client hung up');
    // Its token less the 40 ms refilled since its decision is back: the next token is due 100 ms from
    // now, not 160 (behind it).
    expect(await limiter.peek('k')).toMatchObject({ allowed: false, retryAfterMs: 100 });
  });

  it('gives the turn to the next waiter after an abort', async () => {
    const { limiter, time } = limiterWith({ policies: { limit: 10, window: '1s', burst: 1 } });
    await limiter.consume('k');
    const controller = new AbortController();
    const aborted = limiter.consume('k', { maxWait: '1s', signal: controller.signal });
    await new Promise((resolve) => setImmediate(resolve));
    time.advance(40);
    controller.abort();
    await expect(aborted).rejects.toThrow(/abort/i);
    const next = limiter.consume('k', { maxWait: '1s' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(time.sleeps.map((s) => s.ms)).toEqual([100, 100]);
    time.sleeps[1]?.wake();
    expect(await next).toMatchObject({ allowed: true, waitedMs: 100 });
  });

  it('rejects a call whose signal has already aborted, charging nothing', async () => {
    const { limiter } = limiterWith({ policies: { limit: 1, window: '1s' } });
    const signal = AbortSignal.abort(new Error('gone'));
    await expect(limiter.consume('k', { maxWait: '1s', signal })).rejects.toThrow('gone');
    await expect(limiter.consume('k', { signal })).rejects.toThrow('gone');
    expect(await limiter.consume('k')).toMatchObject({ allowed: true });
  });

  it('waits the longest of several policies, charging every one', async () => {
    const { limiter, time } = limiterWith({
      policies: [
        { limit: 10, window: '1s', burst: 1, name: 'fast' },
        { limit: 2, window: '1s', burst: 1, name: 'slow' },
      ],
    });
    await limiter.consume('k');
    const waiting = limiter.consume('k', { maxWait: '1s' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(time.sleeps.map((s) => s.ms)).toEqual([500]);
    time.sleeps[0]?.wake();
    const decision = await waiting;
    expect(decision).toMatchObject({ allowed: true, waitedMs: 500 });
    // Both were charged: each is a token in debt, a full bucket (one token) from being full again.
    expect(decision.policies.map((p) => p.resetMs)).toEqual([200, 1000]);
    const next = limiter.consume('k', { maxWait: '2s' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(time.sleeps.map((s) => s.ms)).toEqual([500, 1000]);
    time.sleeps[1]?.wake();
    expect(await next).toMatchObject({ allowed: true, waitedMs: 1000 });
  });

  it('does not wait past maxWaiters: a call is then admitted only if the tokens are there now', async () => {
    const { limiter, time } = limiterWith({ policies: { limit: 10, window: '1s', burst: 1 }, maxWaiters: 1 });
    expect(await limiter.consume('k', { maxWait: '1s' })).toMatchObject({ allowed: true, waitedMs: 0 });
    const waiting = limiter.consume('k', { maxWait: '1s' });
    expect(await limiter.consume('k', { maxWait: '1s' })).toMatchObject({
      allowed: false,
      retryAfterMs: 200,
    });
    time.sleeps[0]?.wake();
    expect(await waiting).toMatchObject({ allowed: true, waitedMs: 100 });
    time.advance(200);
    expect(await limiter.consume('k', { maxWait: '1s' })).toMatchObject({ allowed: true, waitedMs: 0 });
  });

  it('refuses a cost more than a bucket holds at once, whatever the wait', async () => {
    const { limiter } = limiterWith({ policies: { limit: 10, window: '1s' } });
    expect(await limiter.consume('k', { cost: 11, maxWait: '1h' })).toMatchObject({
      allowed: false,
      reason: 'cost-exceeds-capacity',
    });
  });
});

describe('maxWait, signal and maxWaiters are checked', () => {
  const { limiter } = limiterWith({ policies: { limit: 10, window: '1s' } });

  it.each([
    [-1, /maxWait/],
    [Number.NaN, /maxWait/],
    [1.5, /maxWait/],
    ['soon', /maxWait/],
    [2 ** 31, /maxWait must be at most 2147483647 ms/],
  ])('rejects maxWait %s', async (maxWait, message) => {
    await expect(limiter.consume('k', { maxWait: maxWait as never })).rejects.toThrow(message);
  });

  it('rejects a signal that is not an AbortSignal', async () => {
    await expect(limiter.consume('k', { signal: {} as never })).rejects.toThrow(
      /signal must be an AbortSignal/,
    );
  });

  it.each([
    [{ limit: 5, window: '1s', algorithm: 'fixed-window' }, /policy '5-per-1s' is a fixed-window/],
    [{ limit: 5, window: '1s', algorithm: 'sliding-window' }, /is a sliding-window/],
    [{ limit: 5, window: '1s', slice: { size: 2 } }, /has token slices/],
  ] as const)('rejects maxWait for a policy that cannot owe: %j', async (policy, message) => {
    const windowed = createLimiter({ policies: policy });
    await expect(windowed.consume('k', { maxWait: '1s' })).rejects.toThrow(TypeError);
    await expect(windowed.consume('k', { maxWait: '1s' })).rejects.toThrow(message);
    // Without maxWait, the same call is a plain check.
    expect(await windowed.consume('k', { maxWait: 0 })).toMatchObject({ allowed: true });
  });

  it.each([0, -1, 1.5, '10'])('rejects maxWaiters %j at construction', (maxWaiters) => {
    expect(() =>
      createLimiter({ policies: { limit: 1, window: '1s' }, maxWaiters: maxWaiters as never }),
    ).toThrow(/maxWaiters/);
  });

  it('rejects a sleep that is not a function at construction', () => {
    expect(() => createLimiter({ policies: { limit: 1, window: '1s' }, sleep: 5 as never })).toThrow(
      /sleep must be a function/,
    );
  });
});

describe('schedule', () => {
  it('runs the function at its turn, and resolves with what it returns', async () => {
    const { limiter, time } = limiterWith({ policies: { limit: 10, window: '1s', burst: 1 } });
    const ran: string[] = [];
    expect(await limiter.schedule('k', () => ran.push('first') && 'one')).toBe('one');
    const second = limiter.schedule('k', async () => {
      ran.push('second');
      return 'two';
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(time.sleeps.map((s) => s.ms)).toEqual([100]);
    expect(ran).toEqual(['first']); // not before its turn
    time.sleeps[0]?.wake();
    expect(await second).toBe('two');
    expect(ran).toEqual(['first', 'second']);
  });

  it('rejects with a TurnRefusedError, running nothing, when no turn comes within maxWait', async () => {
    const { limiter } = limiterWith({ policies: { limit: 10, window: '1s', burst: 1 } });
    await limiter.consume('k');
    let ran = false;
    const refused = limiter.schedule('k', () => (ran = true), { maxWait: 50 });
    await expect(refused).rejects.toBeInstanceOf(TurnRefusedError);
    await expect(refused).rejects.toMatchObject({
      code: 'TOLLGATE_RATE_LIMITED',
      decision: { allowed: false, retryAfterMs: 100 },
    });
    await expect(limiter.schedule('k', () => (ran = true), { cost: 2 })).rejects.toMatchObject({
      code: 'TOLLGATE_COST_EXCEEDS_CAPACITY',
    });
    expect(ran).toBe(false);
  });

  it('waits 30 s at most by default', async () => {
    const { limiter, time } = limiterWith({ policies: { limit: 1, window: '30s' } });
    await limiter.consume('k');
    const within = limiter.schedule('k', () => 'ran');
    await new Promise((resolve) => setImmediate(resolve));
    expect(time.sleeps.map((s) => s.ms)).toEqual([30_000]);
    time.sleeps[0]?.wake();
    expect(await within).toBe('ran');
    await expect(limiter.schedule('k', () => 'ran')).rejects.toMatchObject({
      decision: { retryAfterMs: 60_000 },
    });
  });

  it('passes on what the function throws', async () => {
    const { limiter } = limiterWith({ policies: { limit: 10, window: '1s' } });
    await expect(
      limiter.schedule('k', () => {
        throw new Error('partner down');
      }),
    ).rejects.toThrow('partner down');
  });

  it('checks its function and options', async () => {
    const { limiter } = limiterWith({ policies: { limit: 10, window: '1s' } });
    await expect(limiter.schedule('k', 'run' as never)).rejects.toThrow(/schedule needs a function/);
    await expect(limiter.schedule('k', () => 1, { dryRun: true } as never)).rejects.toThrow(
      /schedule: unknown option 'dryRun'/,
    );
  });
});
