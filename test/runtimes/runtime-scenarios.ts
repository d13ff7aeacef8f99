/**
 * The runtime suite's table: the requests each scenario sends to the app in `runtime-apps/`, served by
 * Bun or Deno, and the answers it expects, the same through every adapter and on every store.
 */
import { QUOTA_EXCEEDED_TYPE } from '@tollgate/core';
import { expect } from 'vitest';
import type { TestResponse } from '../frameworks/app-spec.js';
import { draft10, jsonBody, retryAfterSeconds } from '../frameworks/parse-headers.js';
import {
  type Adapter,
  CONCURRENCY_LIMIT,
  RATE_LIMITS,
  SETTLED_PATH,
  scenarioPath,
} from './runtime-apps/runtime-limits.js';

/** The app's processes on one store: `others` share its Redis (none on the memory store). */
export interface AppServers {
  readonly url: string;
  readonly others: readonly { readonly url: string }[];
}

export interface RuntimeScenario {
  readonly name: string;
  run(adapter: Adapter, servers: AppServers): Promise<void>;
}

/** GETs `path` of `url` and reads the whole answer, header names in lower case. */
export async function get(url: string, path: string): Promise<TestResponse> {
  const response = await fetch(`${url}${path}`);
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: await response.text(),
  };
}

/** Waits until the app has sent or dropped every body and the store has done what their ends started. */
export async function settle(url: string): Promise<void> {
  const settled = await get(url, SETTLED_PATH);
  expect([settled.status, settled.body], 'the app settled (else: what it still waits for)').toEqual([
    204,
    '',
  ]);
}

/** `remaining` of the only policy in a response's `RateLimit` field. */
function remaining(response: TestResponse): unknown {
  return Object.values(draft10(response, 'ratelimit'))[0]?.r;
}

/** The seconds a client waits, rounded up: the full 20 s of one token, less what a slow machine took. */
const ONE_TOKEN_SECONDS = expect.toSatisfy((seconds: number) => seconds >= 18 && seconds <= 20, '18 to 20');

/**
 * Starts a streamed answer of `path` and reads its first chunk; `leave()` aborts it, as a client that
 * goes away mid-download.
 */
async function startDownload(url: string, path: string) {
  const aborts = new AbortController();
  const response = await fetch(`${url}${path}`, { signal: aborts.signal });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  // The runtime may send more than one chunk before the client reads.
  const { value } = await reader.read();
  return {
    status: response.status,
    started: new TextDecoder().decode(value).startsWith('chunk 0\n'),
    leave: () => aborts.abort(),
  };
}

const STREAMED = 'chunk 0\nchunk 1\nchunk 2\n';

export const runtimeScenarios: readonly RuntimeScenario[] = [
  {
    name: 'allows the limit with RateLimit headers, then answers 429 with Retry-After and problem details',
    async run(adapter, { url }) {
      const path = scenarioPath(adapter, 'headers');
      expect(RATE_LIMITS.headers).toEqual({ limit: 3, window: '1m' });
      for (const left of [2, 1, 0]) {
        const ok = await get(url, path);
        expect(ok.status).toBe(200);
        expect(draft10(ok, 'ratelimit')).toEqual({ '3-per-1m': { r: left, t: ONE_TOKEN_SECONDS } });
        expect(draft10(ok, 'ratelimit-policy')).toEqual({ '3-per-1m': { q: 3, w: 60 } });
        expect(retryAfterSeconds(ok)).toBeUndefined();
      }
      const limited = await get(url, path);
      expect(limited.status).toBe(429);
      expect(retryAfterSeconds(limited)).toEqual(ONE_TOKEN_SECONDS);
      expect(draft10(limited, 'ratelimit')).toEqual({ '3-per-1m': { r: 0, t: ONE_TOKEN_SECONDS } });
      expect(limited.headers['content-type']).toBe('application/problem+json');
      expect(jsonBody(limited)).toMatchObject({
        type: QUOTA_EXCEEDED_TYPE,
        status: 429,
        'violated-policies': ['3-per-1m'],
      });
    },
  },
  {
    name: 'lets exactly the limit through of many requests at once, across processes sharing the store',
    async run(adapter, { url, others }) {
      const { limit } = RATE_LIMITS.exact;
      const urls = [url, ...others.map((other) => other.url)];
      const sent = Array.from({ length: 3 * limit }, (_, index) =>
        get(urls[index % urls.length] as string, scenarioPath(adapter, 'exact')),
      );
      const statuses = (await Promise.all(sent)).map((response) => response.status);
      expect(statuses.filter((status) => status === 200)).toHaveLength(limit);
      expect(statuses.filter((status) => status === 429)).toHaveLength(2 * limit);
    },
  },
  {
    name: "limits by the client's address, as the runtime's ip recipe gives it",
    async run(adapter, { url }) {
      const path = scenarioPath(adapter, 'ip');
      expect((await get(url, path)).status).toBe(200);
      const limited = await get(url, path);
      expect(limited.status).toBe(429);
      expect(jsonBody(limited)).toEqual({ key: 'ip:127.0.0.1' });
    },
  },
  {
    name: 'skipSuccessfulRequests gives a streamed success back once sent; a failure and a left download count',
    async run(adapter, { url }) {
      const path = scenarioPath(adapter, 'skip-successful');
      const success = await get(url, `${path}?chunks=3`);
      expect([success.status, success.body, remaining(success)]).toEqual([200, STREAMED, 4]);
      await settle(url);
      const again = await get(url, `${path}?chunks=3`);
      expect(remaining(again)).toBe(4); // the first success was given back
      await settle(url);
      const failure = await get(url, `${path}?chunks=3&status=500`);
      expect([failure.status, failure.body, remaining(failure)]).toEqual([500, STREAMED, 4]);
      await settle(url);
      const left = await startDownload(url, `${path}?chunks=1000&delayMs=10`);
      expect([left.status, left.started]).toEqual([200, true]);
      left.leave();
      await settle(url);
      // 5, less the failure, less the download left before its end, less this one.
      expect(remaining(await get(url, path))).toBe(2);
    },
  },
  {
    name: 'skipFailedRequests gives a streamed failure back once sent; a success counts',
    async run(adapter, { url }) {
      const path = scenarioPath(adapter, 'skip-failed');
      const failure = await get(url, `${path}?chunks=3&status=500`);
      expect([failure.status, failure.body, remaining(failure)]).toEqual([500, STREAMED, 4]);
      await settle(url);
      const success = await get(url, `${path}?chunks=3`);
      expect([success.status, success.body, remaining(success)]).toEqual([200, STREAMED, 4]);
      await settle(url);
      expect(remaining(await get(url, path))).toBe(3);
    },
  },
  {
    name: 'holds a concurrency slot while the body streams, and frees it when the client aborts',
    async run(adapter, { url }) {
      expect(CONCURRENCY_LIMIT.limit).toBe(1);
      const path = scenarioPath(adapter, 'concurrency');
      const download = await startDownload(url, `${path}?chunks=1000&delayMs=10`);
      expect([download.status, download.started]).toEqual([200, true]);
      const refused = await get(url, path);
      expect(refused.status).toBe(429);
      expect(refused.headers['content-type']).toBe('application/problem+json');
      download.leave();
      await settle(url);
      const next = await get(url, `${path}?chunks=3`);
      expect([next.status, next.body]).toEqual([200, STREAMED]);
      await settle(url);
      expect((await get(url, path)).status).toBe(200); // sent to its end, the previous one freed its slot
    },
  },
];
