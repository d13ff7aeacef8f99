/**
 * Scenarios of `delay`, for express-slow-down's users: a request over the limit waits for its turn and
 * goes on with the headers of its turn, in the order the store saw the requests; one whose turn is past
 * `maxWait` is refused at once; a client that hangs up while it waits is neither charged nor served.
 * Part of the one scenario table. Waits pass when the scenario wakes them, on the store's manual clock.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { TestResponse } from './app-spec.js';
import { until } from './lifecycle-sockets.js';
import { draft10, jsonBody, retryAfterSeconds } from './parse-headers.js';
import type { AdapterScenario } from './scenarios.js';
import { servedIds } from './test-answer.js';

/** One token every 10 s, a bucket of 1; a request may wait 25 s for its turn: two turns, not three. */
const DELAYED = { limit: 1, window: '10s', name: 'delayed', delay: { maxWait: '25s' } } as const;

/** When the bucket of the request's turn is full again, from its echoed info: later turns, later times. */
const fullAtMs = (response: TestResponse) => Date.parse(String(jsonBody(response).resetTime));

export const delayScenarios: AdapterScenario[] = [
  {
    name: 'delay: requests over the limit wait for their turns, in order, with their turns’ headers; one past maxWait is refused at once',
    spec: () => ({ global: DELAYED }),
    async run(app, { clock, sleeps }) {
      expect((await app.send('GET', '/a')).status).toBe(200);
      const first = app.send('GET', '/a', { 'x-echo': 'rateLimit' });
      await until(() => sleeps.length === 1, 'the first request waits');
      const second = app.send('GET', '/b', { 'x-echo': 'rateLimit' });
      await until(() => sleeps.length === 2, 'the second request waits');
      // The third's turn would be 30 s away: a 429 at once, without waiting, saying so.
      const third = await app.send('GET', '/a');
      expect(third.status).toBe(429);
      expect(retryAfterSeconds(third)).toBe(30);
      expect(sleeps.map((sleep) => sleep.ms)).toEqual([10_000, 20_000]);

      clock.advance(10_000);
      sleeps[0]?.wake();
      const firstAnswer = await first;
      expect(firstAnswer.status).toBe(200);
      // At its turn, the next token is 10 s away (at its decision it was 20 s: its own charge was owed).
      expect(draft10(firstAnswer, 'ratelimit')).toEqual({ '1-per-10s': { r: 0, t: 10 } });
      expect(jsonBody(firstAnswer)).toMatchObject({ remaining: 0, resetMs: 10_000 });

      clock.advance(10_000);
      sleeps[1]?.wake();
      const secondAnswer = await second;
      expect(secondAnswer.status).toBe(200);
      expect(draft10(secondAnswer, 'ratelimit')).toEqual({ '1-per-10s': { r: 0, t: 10 } });
      expect(fullAtMs(secondAnswer) - fullAtMs(firstAnswer)).toBe(10_000);
    },
  },
  {
    name: 'delay: a client that hangs up while it waits is neither charged nor served; the next one gets its turn',
    spec: () => ({ global: DELAYED }),
    async run(app, { clock, sleeps, idle }) {
      expect((await app.send('GET', '/a')).status).toBe(200);
      const id = randomUUID();
      const hangUp = new AbortController();
      app.send('GET', '/a', { 'x-id': id }, hangUp.signal).catch(() => {});
      await until(() => sleeps.length === 1, 'the request waits');
      hangUp.abort();
      await until(() => sleeps[0]?.aborted === true, 'the server saw the client go');
      await idle(); // the turn given back
      // The next client's turn is the one given back, 10 s away, not 20 s.
      const next = app.send('GET', '/a');
      await until(() => sleeps.length === 2, 'the next request waits');
      expect(sleeps[1]?.ms).toBe(10_000);
      clock.advance(10_000);
      sleeps[1]?.wake();
      expect((await next).status).toBe(200);
      expect(servedIds.has(id)).toBe(false);
    },
  },
];
