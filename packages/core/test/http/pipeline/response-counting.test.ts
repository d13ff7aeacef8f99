/**
 * Counting only some responses, on the core alone: a fake Node.js response ends as a test says, and the
 * limiter's buckets show whether the request was given its tokens back.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { NodeResponse, RateLimitInfo } from '../../../src/http/answer/outcome.js';
import type { RateLimitOptions } from '../../../src/http/options/option-types.js';
import { createHttpLimiter } from '../../../src/http/pipeline/http-limiter.js';
import type { BucketRequest, Store } from '../../../src/model/store.js';
import {
  type FakeRequest,
  failingStore,
  fakeAccess,
  recordingLogger,
  storeOnClock,
  TEST_ADAPTER,
} from '../fixtures.js';

type Options = RateLimitOptions<FakeRequest, FakeResponse>;

/** What a framework would hand `requestWasSuccessful`. */
interface FakeResponse {
  readonly body: string;
}

/** A Node.js response that ends when the test says: completed with a status, or aborted. */
class FakeNodeResponse extends EventEmitter implements NodeResponse {
  writableEnded = false;
  statusCode = 200;

  complete(statusCode: number): void {
    this.statusCode = statusCode;
    this.writableEnded = true;
    this.emit('close');
  }

  abort(): void {
    this.emit('close');
  }
}

/** Lets the refund that a 'close' started reach the store. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 5));

function setup(options: Options, store: Store = storeOnClock().store) {
  const { logger, errors } = recordingLogger();
  const limiter = createHttpLimiter<FakeRequest, FakeResponse>(
    { limit: 3, window: '1h', name: 'counting', store, logger, ...options },
    fakeAccess,
    TEST_ADAPTER,
  );
  /** Sends one request; returns its info and its response, not yet ended. */
  async function send(request: FakeRequest = { ip: '203.0.113.7' }) {
    const outcome = await limiter.check(request);
    if (outcome.kind !== 'allowed') return { kind: outcome.kind };
    const raw = new FakeNodeResponse();
    limiter.countByResponse(outcome.info, request, { body: 'ok' }, raw);
    return { kind: outcome.kind, info: outcome.info, raw };
  }
  return { limiter, errors, send };
}

describe('skipSuccessfulRequests', () => {
  it('gives a completed success its tokens back, and counts a completed failure', async () => {
    const { send } = setup({ skipSuccessfulRequests: true });
    const ok = await send();
    expect(ok.info?.remaining).toBe(2);
    ok.raw?.complete(200);
    await settled();
    const failed = await send();
    expect(failed.info?.remaining).toBe(2); // the success was given back
    failed.raw?.complete(401);
    await settled();
    expect((await send()).info?.remaining).toBe(1); // the failure stays counted
  });

  it('counts an aborted response: hanging up does not erase a charge', async () => {
    const { send } = setup({ skipSuccessfulRequests: true });
    (await send()).raw?.abort();
    await settled();
    expect((await send()).info?.remaining).toBe(1);
  });

  it('lets N concurrent failures through exactly up to the limit', async () => {
    const { send } = setup({ skipSuccessfulRequests: true });
    const kinds = (await Promise.all(Array.from({ length: 20 }, () => send()))).map((s) => s.kind);
    expect(kinds.filter((kind) => kind === 'allowed')).toHaveLength(3);
  });
});

describe('skipFailedRequests', () => {
  it('gives a completed failure its tokens back, counts a success and an aborted response', async () => {
    const { send } = setup({ skipFailedRequests: true });
    (await send()).raw?.complete(500);
    await settled();
    const ok = await send();
    expect(ok.info?.remaining).toBe(2);
    ok.raw?.complete(204);
    await settled();
    (await send()).raw?.abort();
    await settled();
    expect((await send()).info?.remaining).toBe(0);
  });
});

describe('requestWasSuccessful', () => {
  it('decides what counts as a success, given the request and the response, and may be async', async () => {
    const seen: [FakeRequest, FakeResponse][] = [];
    const { send } = setup({
      skipSuccessfulRequests: true,
      requestWasSuccessful: async (request, response) => {
        seen.push([request, response]);
        return request.headers?.['x-login'] === 'ok';
      },
    });
    const request = { ip: '203.0.113.7', headers: { 'x-login': 'ok' } };
    (await send(request)).raw?.complete(500);
    await settled();
    expect(seen).toEqual([[request, { body: 'ok' }]]);
    const next = await send();
    expect(next.info?.remaining).toBe(2); // judged a success despite the 500
  });

  it('keeps the request counted and logs TOLLGATE_CALLBACK_FAILED when it throws', async () => {
    const { send, errors } = setup({
      skipSuccessfulRequests: true,
      requestWasSuccessful: () => {
        throw new Error('no session');
      },
    });
    (await send()).raw?.complete(200);
    await settled();
    expect((await send()).info?.remaining).toBe(1);
    expect(errors).toEqual([
      '[TOLLGATE_CALLBACK_FAILED] requestWasSuccessful failed, so the request stays counted: no session',
    ]);
  });
});

describe('refunds', () => {
  it('never gives a denied request back', async () => {
    const { limiter, send } = setup({ skipSuccessfulRequests: true, limit: 1 });
    await send();
    const denied = await limiter.check({ ip: '203.0.113.7' });
    expect(denied.kind).toBe('limited');
    const raw = new FakeNodeResponse();
    const { info } = denied as { info: RateLimitInfo };
    limiter.countByResponse(info, { ip: '203.0.113.7' }, { body: '' }, raw);
    expect(raw.listenerCount('close')).toBe(0);
  });

  it('gives back once, however often close comes', async () => {
    const { send } = setup({ skipSuccessfulRequests: true });
    const first = await send();
    await send(); // 1 left
    first.raw?.complete(200);
    first.raw?.emit('close');
    await settled();
    expect((await send()).info?.remaining).toBe(1); // 2 back in the bucket before it, not 3
  });

  it('ignores an info it did not make', async () => {
    const { limiter } = setup({ skipSuccessfulRequests: true });
    const made = { decision: { allowed: true } } as unknown as RateLimitInfo;
    const raw = new FakeNodeResponse();
    limiter.countByResponse(made, { ip: '203.0.113.7' }, { body: '' }, raw);
    expect(raw.listenerCount('close')).toBe(0);
  });

  it('adds no listener when every response counts', async () => {
    const { send } = setup({});
    expect((await send()).raw?.listenerCount('close')).toBe(0);
  });

  it('logs TOLLGATE_REFUND_FAILED when the store fails the refund, once per 10 s, and leaves it counted', async () => {
    const { store } = storeOnClock();
    const refusingRefunds: Store = {
      update: (request: BucketRequest) =>
        request.mode === 'refund' ? Promise.reject(new Error('READONLY replica')) : store.update(request),
      reset: (key, policies) => store.reset(key, policies),
      local: true,
    };
    const { send, errors } = setup({ skipSuccessfulRequests: true }, refusingRefunds);
    for (let i = 0; i < 2; i++) (await send()).raw?.complete(200);
    await settled();
    expect((await send()).info?.remaining).toBe(0);
    expect(errors).toEqual([
      "[TOLLGATE_REFUND_FAILED] could not give a request's tokens back, so it stays counted: READONLY replica",
    ]);
  });

  it('gives a degraded charge back to the insurance limiter while the store is down', async () => {
    const { send } = setup({ skipSuccessfulRequests: true }, failingStore(new Error('down')));
    for (let i = 0; i < 5; i++) {
      const sent = await send();
      expect(sent.info?.decision.degraded).toBe(true);
      expect(sent.info?.remaining).toBe(2);
      sent.raw?.complete(200);
      await settled();
    }
  });
});

describe('bad options', () => {
  it.each([
    [{ skipSuccessfulRequests: 'yes' }, '@tollgate/test: skipSuccessfulRequests must be true or false'],
    [{ skipFailedRequests: 1 }, '@tollgate/test: skipFailedRequests must be true or false'],
    [{ requestWasSuccessful: true }, '@tollgate/test: requestWasSuccessful must be a function'],
  ])('rejects %j at construction', (options, message) => {
    expect(() => setup(options as never)).toThrow(new TypeError(message));
  });
});
