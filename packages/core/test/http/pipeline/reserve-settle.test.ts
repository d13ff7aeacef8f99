/**
 * `cost: { reserve, settle }` and `nearLimit` / `onNearLimit` on the core's HTTP limiter: the reserved
 * cost is charged when the request arrives, settled when a fake Node.js response ends as the test says,
 * and nothing the app's callbacks or the store do there reaches the request.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { NodeResponse, RateLimitInfo } from '../../../src/http/answer/outcome.js';
import type { MeteredCost, RateLimitOptions } from '../../../src/http/options/option-types.js';
import { mergeRateLimitOptions } from '../../../src/http/options/route-options.js';
import { createHttpLimiter } from '../../../src/http/pipeline/http-limiter.js';
import { createLimiter } from '../../../src/limiter/limiter.js';
import type { Store } from '../../../src/model/store.js';
import { type FakeRequest, fakeAccess, recordingLogger, storeOnClock, TEST_ADAPTER } from '../fixtures.js';

/** What a framework would hand `settle`: the usage the handler recorded, as a header would hold it. */
interface FakeResponse {
  tokensUsed?: unknown;
}

type Options = RateLimitOptions<FakeRequest, FakeResponse>;

/** A Node.js response that ends when the test says: completed with a status, or aborted. */
class FakeNodeResponse extends EventEmitter implements NodeResponse {
  writableEnded = false;
  statusCode = 200;

  complete(statusCode = 200): void {
    this.statusCode = statusCode;
    this.writableEnded = true;
    this.emit('close');
  }

  abort(): void {
    this.emit('close');
  }
}

/** Lets what a 'close' started reach the store. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 5));

const BUDGET = { limit: 10_000, window: '1h', name: 'tokens' } as const;
const LLM_COST: MeteredCost<FakeRequest, FakeResponse> = {
  reserve: 1_000,
  settle: (_request, response) => response.tokensUsed as number,
};

function setup(options: Options, store: Store = storeOnClock().store) {
  const { logger, errors } = recordingLogger();
  const limiter = createHttpLimiter<FakeRequest, FakeResponse>(
    { ...BUDGET, store, logger, cost: LLM_COST, ...options },
    fakeAccess,
    TEST_ADAPTER,
  );
  const probe = createLimiter({ store, policies: { limit: 10_000, window: '1h' }, namespace: 'tokens' });
  const remaining = async () => (await probe.peek('ip:203.0.113.7')).decidedBy.remaining;
  /** Sends one request; returns its outcome, the framework response and the Node.js one, not yet ended. */
  async function send(request: FakeRequest = { ip: '203.0.113.7' }) {
    const outcome = await limiter.check(request);
    const response: FakeResponse = {};
    const raw = new FakeNodeResponse();
    if (outcome.kind === 'allowed') limiter.countByResponse(outcome.info, request, response, raw);
    return { outcome, response, raw };
  }
  return { limiter, errors, send, remaining };
}

describe('cost: { reserve, settle }', () => {
  it('charges the reserved cost, then settles to what the response says: an LLM token budget', async () => {
    const { send, remaining } = setup({});
    let spent = 0;
    for (const used of [420, 1_000, 2_500, 0]) {
      const { response, raw } = await send();
      expect(await remaining()).toBe(10_000 - spent - 1_000);
      response.tokensUsed = used; // known only once the answer is done
      raw.complete();
      await settled();
      spent += used;
      expect(await remaining()).toBe(10_000 - spent);
    }
  });

  it('settles a streamed body only when the stream has ended, and an aborted one with what the app says', async () => {
    const { send, remaining } = setup({});
    const streaming = await send();
    streaming.response.tokensUsed = 300; // counted so far
    await settled();
    expect(await remaining()).toBe(9_000); // still the reservation
    streaming.response.tokensUsed = 1_200;
    streaming.raw.complete();
    await settled();
    expect(await remaining()).toBe(8_800);
    const hungUp = await send();
    hungUp.response.tokensUsed = 50;
    hungUp.raw.abort();
    await settled();
    expect(await remaining()).toBe(8_750);
  });

  it('takes the reserved cost from a function of the request, sync or async', async () => {
    const { send, remaining } = setup({
      cost: { reserve: async (request) => (request.plan === 'pro' ? 2_000 : 500), settle: () => 100 },
    });
    await send({ ip: '203.0.113.7', plan: 'pro' });
    expect(await remaining()).toBe(8_000);
  });

  it('refuses a reservation the bucket cannot hold, and settles nothing for it', async () => {
    const { send, remaining } = setup({ cost: { reserve: 20_000, settle: () => 1 } });
    const { outcome } = await send();
    expect(outcome.kind).toBe('limited');
    expect(outcome.kind !== 'skipped' && outcome.info?.decision.reason).toBe('cost-exceeds-capacity');
    expect(await remaining()).toBe(10_000);
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('usage unknown');
      },
      'settle failed, so the request stays charged its reserved cost: usage unknown',
    ],
    [
      'rejects',
      () => Promise.reject(new Error('usage unknown')),
      'settle failed, so the request stays charged its reserved cost: usage unknown',
    ],
    [
      'returns NaN',
      () => Number.NaN,
      'settle returned NaN, not a cost of 0 or more, so the request stays charged its reserved cost',
    ],
    ['returns -1', () => -1, 'settle returned -1, not a cost of 0 or more'],
    ['returns a string', () => '12' as never, "settle returned '12', not a cost of 0 or more"],
  ])('keeps the reserved cost when settle %s, and logs it', async (_, settle, message) => {
    const { send, remaining, errors } = setup({ cost: { reserve: 1_000, settle } });
    (await send()).raw.complete();
    await settled();
    expect(await remaining()).toBe(9_000);
    expect(errors).toEqual([expect.stringContaining(`[TOLLGATE_CALLBACK_FAILED] ${message}`)]);
  });

  it('keeps the reserved cost when the store fails the settle, and logs it; nothing reaches the request', async () => {
    const { store } = storeOnClock();
    let down = false;
    const flaky: Store = {
      local: true,
      update: (request) => (down ? Promise.reject(new Error('down')) : store.update(request)),
      reset: (key, policies) => store.reset(key, policies),
    };
    const { send, remaining, errors } = setup({}, flaky);
    const { response, raw } = await send();
    response.tokensUsed = 10;
    down = true;
    raw.complete();
    await settled();
    down = false;
    expect(await remaining()).toBe(9_000);
    expect(errors).toEqual([
      expect.stringContaining(
        "[TOLLGATE_REFUND_FAILED] could not settle a request's cost, so it stays charged its reserved cost: down",
      ),
    ]);
  });

  it('with skipFailedRequests, a failure gets the whole reservation back and is not settled; a success is', async () => {
    let settles = 0;
    const { send, remaining } = setup({
      skipFailedRequests: true,
      cost: {
        reserve: 1_000,
        settle: () => {
          settles++;
          return 250;
        },
      },
    });
    (await send()).raw.complete(500);
    await settled();
    expect([settles, await remaining()]).toEqual([0, 10_000]);
    (await send()).raw.complete(200);
    await settled();
    expect([settles, await remaining()]).toEqual([1, 9_750]);
  });

  it('with skipSuccessfulRequests, an aborted response counts and is settled', async () => {
    const { send, remaining } = setup({ skipSuccessfulRequests: true });
    (await send()).raw.complete(200);
    await settled();
    expect(await remaining()).toBe(10_000);
    const aborted = await send();
    aborted.response.tokensUsed = 1_500;
    aborted.raw.abort();
    await settled();
    expect(await remaining()).toBe(8_500);
  });

  it.each<[unknown, string]>([
    [{ reserve: 0, settle: () => 1 }, 'cost.reserve must be a positive number or a function; got 0'],
    [{ reserve: 10 }, 'cost.settle must be a function of the request and the response'],
    [{ settle: () => 1 }, 'cost.reserve is missing'],
    [{ reserve: 10, settle: () => 1, refund: true }, "cost has an unknown field 'refund'"],
    [Number.NaN, 'cost must be a positive number or a function; got NaN'],
  ])('rejects cost %j at construction', (cost, message) => {
    expect(() => setup({ cost: cost as never })).toThrow(`@tollgate/test: ${message}`);
  });
});

describe('nearLimit and onNearLimit', () => {
  function nearSetup(options: Options) {
    const { logger, errors } = recordingLogger();
    const told: RateLimitInfo[] = [];
    const limiter = createHttpLimiter<FakeRequest, FakeResponse>(
      {
        ...(options.policies === undefined ? { limit: 10, window: '1h' } : {}),
        store: storeOnClock().store,
        logger,
        onNearLimit: (_request, info) => void told.push(info),
        ...options,
      },
      fakeAccess,
      TEST_ADAPTER,
    );
    const statuses = async (count: number) => {
      const kinds: string[] = [];
      for (let i = 0; i < count; i++) {
        const outcome = await limiter.check({ ip: '203.0.113.7' });
        kinds.push(outcome.kind === 'allowed' && outcome.info.decision.nearLimit ? 'near' : outcome.kind);
      }
      return kinds;
    };
    return { told, errors, statuses };
  }

  it('marks requests 8, 9 and 10 of 10 as near and tells onNearLimit; 11 is refused and not told', async () => {
    const { told, statuses } = nearSetup({ nearLimit: 0.8 });
    expect(await statuses(11)).toEqual([
      ...Array.from({ length: 7 }, () => 'allowed'),
      'near',
      'near',
      'near',
      'limited',
    ]);
    expect(told.map((info) => info.remaining)).toEqual([2, 1, 0]);
  });

  it('keeps nearLimit for every limit of a limit function', async () => {
    const { statuses } = nearSetup({ limit: async () => 2, nearLimit: 1 });
    expect(await statuses(3)).toEqual(['allowed', 'near', 'limited']);
  });

  it('takes nearLimit per policy with policies, and refuses it beside them', async () => {
    const { statuses } = nearSetup({ policies: [{ limit: 2, window: '1h', nearLimit: 0.5 }] });
    expect(await statuses(3)).toEqual(['near', 'near', 'limited']);
    expect(() => nearSetup({ nearLimit: 0.5, policies: { limit: 2, window: '1h' } })).toThrow(
      '@tollgate/test: with policies, give each policy its own nearLimit',
    );
  });

  it('does not wait for onNearLimit, and logs it when it fails; the request goes on', async () => {
    const { errors, statuses } = nearSetup({
      nearLimit: 1,
      limit: 1,
      onNearLimit: async () => {
        throw new Error('mailer down');
      },
    });
    expect(await statuses(1)).toEqual(['near']);
    await settled();
    expect(errors).toEqual([
      expect.stringContaining(
        '[TOLLGATE_CALLBACK_FAILED] onNearLimit failed; the request went on: mailer down',
      ),
    ]);
  });

  it.each([0, 2, '0.5'])('rejects nearLimit %j at construction', (nearLimit) => {
    expect(() => nearSetup({ nearLimit: nearLimit as never })).toThrow(
      '@tollgate/test: nearLimit must be a fraction above 0 and at most 1, such as 0.8',
    );
  });

  it("drops the app's nearLimit for a route that brings its own policies", () => {
    const merged = mergeRateLimitOptions<Options>(
      { limit: 10, nearLimit: 0.8 },
      { policies: { limit: 5, window: '1m' } },
    );
    expect(merged).toEqual({ policies: { limit: 5, window: '1m' } });
  });
});
