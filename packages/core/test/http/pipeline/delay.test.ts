/**
 * `delay`: a request over the limit waits for its turn instead of a 429, with the headers of its turn;
 * refused at once past `maxWait`; a hang-up while it waits gives the turn back and serves nothing; the
 * option is checked at construction.
 */
import { EventEmitter } from 'node:events';
import { parseList } from 'structured-headers';
import { describe, expect, it } from 'vitest';
import type { NodeResponse, RateLimitOutcome } from '../../../src/http/answer/outcome.js';
import { decisionAtTurn } from '../../../src/http/answer/turn.js';
import type { DelayOptions, RateLimitOptions } from '../../../src/http/options/option-types.js';
import { createHttpLimiter } from '../../../src/http/pipeline/http-limiter.js';
import { type ResponseAccess, rateLimitLifecycle } from '../../../src/http/pipeline/lifecycle.js';
import type { Decision, PolicyDecision } from '../../../src/model/decision.js';
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

/** A sleep that ends when the test says so, each one recorded with its length. */
function manualSleeps() {
  const sleeps: { ms: number; wake(): void }[] = [];
  const sleep = (ms: number) => new Promise<void>((wake) => sleeps.push({ ms, wake }));
  return { sleeps, sleep };
}

/**
 * 1 per 10 s (a token every 10 s, a bucket of 1), requests waiting up to 25 s, on a hand-moved clock and
 * a hand-woken sleep; `delay` fields given are added to those.
 */
function setup({ delay, ...options }: Omit<Options, 'delay'> & { delay?: Partial<DelayOptions> } = {}) {
  const { clock, store } = storeOnClock();
  const { sleeps, sleep } = manualSleeps();
  const { logger } = recordingLogger();
  const limiter = createHttpLimiter<FakeRequest>(
    {
      limit: 1,
      window: '10s',
      name: 'delayed',
      store,
      logger,
      ...options,
      delay: { maxWait: '25s', sleep, ...delay },
    },
    fakeAccess,
    TEST_ADAPTER,
  );
  return { clock, limiter, sleeps };
}

/** `{ policy: { r, t } }` from a draft-11 `RateLimit` header. */
function rateLimitOf(outcome: RateLimitOutcome): Record<string, Record<string, unknown>> {
  const value = (outcome as { headers: Record<string, string> }).headers.RateLimit as string;
  return Object.fromEntries(parseList(value).map(([name, params]) => [name, Object.fromEntries(params)]));
}

/** Lets every pending reaction run (the store's answer, the sleep's start). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('a limiter with delay', () => {
  it('holds a request over the limit until its turn, with the headers of its turn; refuses at once past maxWait', async () => {
    const { clock, limiter, sleeps } = setup();
    expect((await limiter.check(CLIENT)).kind).toBe('allowed');
    const first = limiter.check(CLIENT);
    await settle();
    const second = limiter.check(CLIENT);
    await settle();
    // The third's turn would be 30 s away, past the 25 s it may wait: a 429 now, saying so.
    const third = await limiter.check(CLIENT);
    expect(third.kind).toBe('limited');
    expect((third as { headers: Record<string, string> }).headers['Retry-After']).toBe('30');
    expect(sleeps.map((s) => s.ms)).toEqual([10_000, 20_000]);

    clock.nowMs += 10_000;
    sleeps[0]?.wake();
    const firstOutcome = await first;
    expect(firstOutcome.kind).toBe('allowed');
    // At its turn the next token is 10 s away (at its decision, 20 s: its own charge was owed then).
    expect(rateLimitOf(firstOutcome)).toEqual({ '1-per-10s': { r: 0, t: 10 } });
    const info = (firstOutcome as { info: { decision: Decision; resetMs: number } }).info;
    expect(info.decision).toMatchObject({ waitedMs: 10_000, decidedAtMs: clock.nowMs });
    expect(info.resetMs).toBe(10_000);

    clock.nowMs += 10_000;
    sleeps[1]?.wake();
    const secondOutcome = await second;
    expect(rateLimitOf(secondOutcome)).toEqual({ '1-per-10s': { r: 0, t: 10 } });
    expect((secondOutcome as { info: { decision: Decision } }).info.decision.waitedMs).toBe(20_000);
  });

  it('gives the turn back when its signal aborts while it waits, and rejects with the reason', async () => {
    const { limiter, sleeps } = setup();
    await limiter.check(CLIENT);
    const gone = new AbortController();
    const waiting = limiter.check(CLIENT, gone.signal);
    await settle();
    expect(sleeps.map((s) => s.ms)).toEqual([10_000]);
    gone.abort(new Error('hung up'));
    await expect(waiting).rejects.toThrow('hung up');
    // The next request gets the turn the first gave back: 10 s away, not 20.
    const next = limiter.check(CLIENT);
    await settle();
    expect(sleeps.map((s) => s.ms)).toEqual([10_000, 10_000]);
    sleeps[1]?.wake();
    expect((await next).kind).toBe('allowed');
  });

  it('holds no more than maxWaiters requests at once: past it, a request over the limit is refused at once', async () => {
    const { limiter, sleeps } = setup({ delay: { maxWaiters: 1 } });
    await limiter.check(CLIENT);
    const waiting = limiter.check(CLIENT);
    await settle();
    expect((await limiter.check(CLIENT)).kind).toBe('limited');
    expect(sleeps).toHaveLength(1);
    sleeps[0]?.wake();
    expect((await waiting).kind).toBe('allowed');
  });

  it('when the store fails, lets the insurance limiter decide at once: nothing is held', async () => {
    const { logger } = recordingLogger();
    const { sleeps, sleep } = manualSleeps();
    const limiter = createHttpLimiter<FakeRequest>(
      {
        limit: 1,
        window: '10s',
        store: failingStore(new Error('down')),
        logger,
        delay: { maxWait: '25s', sleep },
      },
      fakeAccess,
      TEST_ADAPTER,
    );
    const first = await limiter.check(CLIENT);
    expect(first.kind).toBe('allowed');
    expect((first as { info: { decision: Decision } }).info.decision.degraded).toBe(true);
    expect((await limiter.check(CLIENT)).kind).toBe('limited');
    expect(sleeps).toEqual([]);
  });

  it("passes a hang-up through even with onStoreError: 'allow', which would otherwise let the request on", async () => {
    const { limiter } = setup({ onStoreError: 'allow' });
    await limiter.check(CLIENT);
    const gone = new AbortController();
    const waiting = limiter.check(CLIENT, gone.signal);
    await settle();
    gone.abort();
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
  });

  it.each(['allow', 'deny'] as const)(
    "rejects a client gone while its store failed with onStoreError: '%s' with the store's own error",
    async (onStoreError) => {
      const failure = new Error('down');
      let fail = (_error: Error) => {};
      const store = {
        update: () => new Promise<never>((_resolve, reject) => (fail = reject)),
        reset: async () => {},
      };
      const { limiter } = setup({ store, onStoreError });
      const gone = new AbortController();
      const checked = limiter.check(CLIENT, gone.signal);
      await settle();
      gone.abort();
      fail(failure);
      await expect(checked).rejects.toBe(failure);
    },
  );
});

/** A Node.js response that can be closed by the test, as a client hanging up closes one. */
class ClosableResponse extends EventEmitter implements NodeResponse {
  writableEnded = false;
  closed = false;
  readonly statusCode = 200;
  readonly headers: Record<string, string> = {};
  hangUp(): void {
    this.closed = true;
    this.emit('close');
  }
}

const closableResponses: ResponseAccess<FakeRequest, ClosableResponse> = {
  node: (response) => response,
  getHeader: (response, name) => response.headers[name],
  setHeaders: (response, headers) => void Object.assign(response.headers, headers),
  removeHeader: (response, name) => void delete response.headers[name],
  send() {},
};

describe('the lifecycle of a limiter with delay', () => {
  it('stops a request whose client closed the response while it waited, and gives its turn back', async () => {
    const { limiter, sleeps } = setup();
    const handle = rateLimitLifecycle(limiter, closableResponses);
    expect(await handle({ ...CLIENT }, new ClosableResponse())).toEqual({ kind: 'next' });
    const response = new ClosableResponse();
    const waiting = handle({ ...CLIENT }, response);
    await settle();
    response.hangUp();
    expect(await waiting).toEqual({ kind: 'stopped' });
    expect(response.headers).toEqual({}); // nothing written to a response nobody reads
    const next = handle({ ...CLIENT }, new ClosableResponse());
    await settle();
    expect(sleeps.map((s) => s.ms)).toEqual([10_000, 10_000]);
    sleeps[1]?.wake();
    expect(await next).toEqual({ kind: 'next' });
  });

  it('takes the signal the access gives (a Fetch Request’s) rather than the response’s close', async () => {
    const { limiter, sleeps } = setup();
    const gone = new AbortController();
    const handle = rateLimitLifecycle(limiter, { ...closableResponses, hangUp: () => gone.signal });
    await handle({ ...CLIENT }, new ClosableResponse());
    const waiting = handle({ ...CLIENT }, new ClosableResponse());
    await settle();
    expect(sleeps).toHaveLength(1);
    gone.abort();
    expect(await waiting).toEqual({ kind: 'stopped' });
  });
});

describe('delay is checked at construction', () => {
  const build = (options: Options) => () =>
    createHttpLimiter<FakeRequest>({ limit: 5, window: '1m', ...options }, fakeAccess, TEST_ADAPTER);

  it('takes an object with maxWait, and false or nothing for none', () => {
    expect(build({ delay: { maxWait: '2s', maxWaiters: 10, sleep: async () => {} } })().waits).toBe(true);
    expect(build({ delay: false })().waits).toBe(false);
    expect(build({})().waits).toBe(false);
  });

  it.each([
    [{ maxWait: 0 }, 'delay.maxWait must be a positive whole number of milliseconds'],
    [{}, 'delay.maxWait is missing'],
    [{ maxWait: 2 ** 31 }, 'delay.maxWait must be at most 2147483647 ms'],
    [{ maxWait: '2s', maxWaiters: 0 }, 'delay.maxWaiters must be a positive whole number'],
    [{ maxWait: '2s', sleep: 5 }, 'delay.sleep must be a function'],
    [{ maxWait: '2s', delayMs: 5 }, "delay has an unknown field 'delayMs'"],
    ['2s', "delay must be an object like { maxWait: '2s' }, or false"],
  ])('refuses delay %j', (delay, message) => {
    expect(build({ delay } as Options)).toThrow(`@tollgate/test: ${message}`);
  });

  it.each([
    [{ algorithm: 'fixed-window' }, "policy '5-per-1m' is a fixed-window"],
    [{ limit: () => 5, algorithm: 'sliding-window' }, "algorithm is 'sliding-window'"],
    [
      {
        limit: undefined,
        window: undefined,
        policies: [{ limit: 5, window: '1m', algorithm: 'fixed-window' }],
      },
      "policy '5-per-1m' is a fixed-window",
    ],
    [
      { limit: undefined, window: undefined, policies: { limit: 500, window: '1m', slice: { size: 10 } } },
      "policy '500-per-1m' has token slices",
    ],
  ])('refuses delay where a policy cannot owe: %j', (options, why) => {
    expect(build({ ...(options as Options), delay: { maxWait: '2s' } })).toThrow(
      `@tollgate/test: delay needs token-bucket policies, and ${why}`,
    );
  });

  it('refuses delay with a metered cost and with dryRun, saying why', () => {
    const metered = { reserve: 5, settle: () => 5 };
    expect(build({ cost: metered, delay: { maxWait: '2s' } })).toThrow(
      'delay cannot be combined with a metered cost',
    );
    expect(build({ dryRun: () => true, delay: { maxWait: '2s' } })).toThrow(
      'delay cannot be combined with dryRun',
    );
  });
});

/** A token bucket's part, as a decision gives it. */
function part(fields: Partial<PolicyDecision>): PolicyDecision {
  return {
    policy: 'p',
    algorithm: 'token-bucket',
    limit: 10,
    windowMs: 1_000,
    capacity: 10,
    remaining: 0,
    resetMs: 0,
    nextTokenMs: 100,
    retryAfterMs: 0,
    nearLimit: false,
    ...fields,
  };
}

describe('decisionAtTurn', () => {
  const decision = (policies: PolicyDecision[], waitedMs: number): Decision => ({
    allowed: true,
    reason: 'allowed',
    cost: 1,
    retryAfterMs: 0,
    decidedBy: policies[0] as PolicyDecision,
    policies,
    decidedAtMs: 1_000_000,
    degraded: false,
    nearLimit: false,
    waitedMs,
  });

  it('counts every time from the turn, and a policy owed less has gained whole tokens by then', () => {
    // A second's bucket owed 3 tokens (its turn 300 ms away); an hourly one with 2 left of 100.
    const owed = part({
      policy: 'second',
      remaining: 0,
      resetMs: 1_300,
      nextTokenMs: 400,
      retryAfterMs: 400,
    });
    const hourly = part({
      policy: 'hourly',
      limit: 100,
      windowMs: 3_600_000,
      capacity: 100,
      remaining: 2,
      resetMs: 3_528_000,
      nextTokenMs: 36_000,
      retryAfterMs: 0,
    });
    const turn = decisionAtTurn(decision([owed, hourly], 300));
    expect(turn.decidedAtMs).toBe(1_000_300);
    expect(turn.waitedMs).toBe(300);
    expect(turn.policies[0]).toMatchObject({
      remaining: 0,
      resetMs: 1_000,
      nextTokenMs: 100,
      retryAfterMs: 100,
    });
    expect(turn.policies[1]).toMatchObject({ remaining: 2, resetMs: 3_527_700, nextTokenMs: 35_700 });
    expect(turn.decidedBy).toBe(turn.policies[0]);
  });

  it('adds the tokens that came back before the turn, and a full bucket’s next token is a token’s time', () => {
    const second = part({ remaining: 8, resetMs: 150, nextTokenMs: 50, capacity: 10 });
    // 8.5 tokens: the 9th back at 50 ms, the 10th at 150 ms, full from then.
    expect(decisionAtTurn(decision([second], 120)).policies[0]).toMatchObject({
      remaining: 9,
      resetMs: 30,
      nextTokenMs: 30,
    });
    expect(decisionAtTurn(decision([second], 160)).policies[0]).toMatchObject({
      remaining: 10,
      resetMs: 0,
      nextTokenMs: 100,
    });
    const gaining = part({ remaining: 3, resetMs: 650, nextTokenMs: 50 });
    expect(decisionAtTurn(decision([gaining], 260)).policies[0]).toMatchObject({
      remaining: 6, // tokens back at 50, 150 and 250 ms
      nextTokenMs: 90,
    });
  });

  it('leaves a decision that did not wait as it is', () => {
    const now = decision([part({})], 0);
    expect(decisionAtTurn(now)).toBe(now);
  });
});
