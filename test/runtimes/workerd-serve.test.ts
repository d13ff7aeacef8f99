/**
 * @tollgate/fetch and @tollgate/hono on workerd, the registry's binary: limits in an isolate's memory,
 * and on Redis over TCP (and TLS) with a client per request, exact across two workerd processes on one
 * Redis; and the Workers example, served the way `pnpm start` serves it.
 */
import { randomInt } from 'node:crypto';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { makeCertificates, startTlsRedisServer, type TlsRedisProcess } from '../harness/tls.js';
import { bundleWorker, startWorkerd, type Workerd } from './workerd-harness.js';

const fixture = (name: string) => fileURLToPath(new URL(`workerd/${name}`, import.meta.url));
const exampleDir = fileURLToPath(new URL('../../examples/workers/', import.meta.url));

// This run's client addresses: a run on a shared Redis (REDIS_URL) finds no bucket of an earlier one.
const runOctet = randomInt(256);
let clients = 0;
const newClient = () => `10.${runOctet}.${Math.floor(++clients / 256)}.${clients % 256}`;

let dir: string;
/** Two processes serving `workerd.capnp` on one Redis, and the example as `pnpm start` serves it. */
let first: Workerd;
let second: Workerd;
let example: Workerd;
/** Whatever started, to stop after. */
const running: Workerd[] = [];
/** A TLS-only Redis, or why this redis-server has none. */
let tlsRedis: TlsRedisProcess | { unavailable: string };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tollgate-workerd-'));
  [tlsRedis] = await Promise.all([
    startTlsRedisServer(),
    bundleWorker(fixture('fetch-worker.ts'), join(dir, 'fetch-worker.js')),
    bundleWorker(fixture('hono-worker.ts'), join(dir, 'hono-worker.js')),
    bundleWorker(join(exampleDir, 'index.ts'), join(dir, 'example.js')),
    copyFile(fixture('workerd.capnp'), join(dir, 'workerd.capnp')),
  ]);
  // workerd.capnp's network trusts ca.pem: the TLS Redis's CA, or one of no use when there is none.
  const tls = 'unavailable' in tlsRedis ? { url: '', ca: makeCertificates().ca } : tlsRedis;
  await writeFile(join(dir, 'ca.pem'), tls.ca);
  const onRedis = {
    config: 'workerd.capnp',
    cwd: dir,
    sockets: ['fetch', 'hono', 'example'],
    env: { REDIS_URL: inject('redisUrl'), REDIS_TLS_URL: tls.url },
  };
  const started = await Promise.allSettled([
    startWorkerd(onRedis),
    startWorkerd(onRedis),
    // The example's own config, which workerd bundles itself (with the example's esbuild).
    startWorkerd({
      config: 'wrangler.jsonc',
      cwd: exampleDir,
      sockets: ['http'],
      args: ['-s', 'http=127.0.0.1:0'],
    }),
  ]);
  for (const result of started) if (result.status === 'fulfilled') running.push(result.value);
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  [first, second, example] = running as [Workerd, Workerd, Workerd];
});

afterAll(async () => {
  await Promise.all(running.map((server) => server.stop()));
  if (tlsRedis && 'stop' in tlsRedis) await tlsRedis.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A GET to `path` on `server`'s `socket`, from `client` (as the CF-Connecting-IP Cloudflare would set). */
async function get(server: Workerd, socket: string, path: string, client?: string): Promise<Response> {
  const headers: Record<string, string> = client === undefined ? {} : { 'CF-Connecting-IP': client };
  const response = await fetch(`http://127.0.0.1:${server.ports[socket]}${path}`, { headers });
  await response.arrayBuffer(); // read to its end: the connection is free again
  return response;
}

/** The items of a draft-11 `RateLimit` field: each policy's name, remaining `r` and reset `t` in seconds. */
function rateLimitItems(response: Response): { policy: string; r: number; t: number }[] {
  const field = response.headers.get('ratelimit') ?? '';
  return [...field.matchAll(/"([^"]+)";r=(\d+);t=(\d+)/g)].map(([, policy, r, t]) => ({
    policy: policy as string,
    r: Number(r),
    t: Number(t),
  }));
}

/** `Retry-After` in seconds, checked to be a delay (not a date) of at least one second. */
function retryAfterSeconds(response: Response): number {
  const value = response.headers.get('retry-after') ?? '';
  expect(value).toMatch(/^\d+$/);
  expect(Number(value)).toBeGreaterThan(0);
  return Number(value);
}

describe('the example, served from its wrangler.jsonc (in memory)', () => {
  it('limits /api/* to 10 a minute per client, with both limits in RateLimit, then a 429 with Retry-After', async () => {
    const client = newClient();
    for (let sent = 1; sent <= 10; sent++) {
      const response = await get(example, 'http', '/api/quote', client);
      expect(response.status).toBe(200);
      expect(rateLimitItems(response)).toEqual([
        { policy: '60-per-1m', r: 60 - sent, t: expect.any(Number) },
        { policy: '10-per-1m', r: 10 - sent, t: expect.any(Number) },
      ]);
    }
    const limited = await get(example, 'http', '/api/quote', client);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toBe('application/problem+json');
    expect(retryAfterSeconds(limited)).toBeLessThanOrEqual(60);

    const other = await get(example, 'http', '/api/quote', newClient());
    expect(other.status).toBe(200);
  });

  it('leaves /health unlimited, and answers 400 to a request without CF-Connecting-IP', async () => {
    const health = await get(example, 'http', '/health');
    expect(health.status).toBe(200);
    expect(health.headers.get('ratelimit')).toBeNull();
    expect((await get(example, 'http', '/')).status).toBe(400);
  });
});

describe('@tollgate/fetch in an isolate’s memory', () => {
  it('allows 3, then answers 429 with Retry-After; each workerd process counts on its own', async () => {
    const client = newClient();
    for (const server of [first, second]) {
      const statuses = [];
      for (let sent = 0; sent < 4; sent++)
        statuses.push((await get(server, 'fetch', '/memory', client)).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
    }
    const limited = await get(first, 'fetch', '/memory', client);
    expect(rateLimitItems(limited)).toEqual([{ policy: '3-per-1m', r: 0, t: retryAfterSeconds(limited) }]);
  });

  it('gives back the charge of a failed answer once its body was sent (skipFailedRequests)', async () => {
    const client = newClient();
    const statuses = [];
    for (let sent = 0; sent < 5; sent++)
      statuses.push((await get(first, 'fetch', '/memory/refund', client)).status);
    expect(statuses).toEqual([500, 500, 500, 500, 500]);
  });
});

describe('on Redis over TCP, a client connected per request', () => {
  it('ioredis and node-redis share one limit, exact across two workerd processes', async () => {
    const client = newClient();
    const targets = [
      () => get(first, 'fetch', '/ioredis', client),
      () => get(second, 'fetch', '/node-redis', client),
      () => get(first, 'fetch', '/node-redis', client),
      () => get(second, 'fetch', '/ioredis', client),
    ];
    const responses = await Promise.all(
      Array.from({ length: 24 }, (_, n) => (targets[n % 4] as () => Promise<Response>)()),
    );
    const allowed = responses.filter((response) => response.status === 200);
    expect(allowed).toHaveLength(5);
    expect(responses.filter((response) => response.status === 429)).toHaveLength(19);
    expect(allowed.map((response) => rateLimitItems(response)[0]?.r).sort()).toEqual([0, 1, 2, 3, 4]);
  });

  it('reaches a TLS Redis (rediss://) too, with either client', async (context) => {
    if ('unavailable' in tlsRedis) context.skip(tlsRedis.unavailable);
    const client = newClient();
    const statuses = [];
    for (let sent = 0; sent < 6; sent++) {
      statuses.push(
        (await get(first, 'fetch', `/${sent % 2 ? 'node-redis' : 'ioredis'}?tls`, client)).status,
      );
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });

  it('limits the example’s /api/* on Redis: 10 a minute per client across both processes', async () => {
    const client = newClient();
    const responses = await Promise.all(
      Array.from({ length: 16 }, (_, n) => get(n % 2 ? first : second, 'example', '/api/quote', client)),
    );
    expect(responses.filter((response) => response.status === 200)).toHaveLength(10);
    const limited = responses.filter((response) => response.status === 429);
    expect(limited).toHaveLength(6);
    for (const response of limited) expect(retryAfterSeconds(response)).toBeLessThanOrEqual(60);
  });
});

describe('on Redis, the work after the response, which workerd would cut off with the request', () => {
  it.each([
    ['@tollgate/fetch', 'fetch', '/ioredis/refund'],
    ['@tollgate/hono', 'hono', '/refund'],
  ])(
    '%s gives back the charge of a failed answer once its body was sent (skipFailedRequests)',
    async (_, socket, path) => {
      const client = newClient();
      const statuses = [];
      for (let sent = 0; sent < 4; sent++) statuses.push((await get(first, socket, path, client)).status);
      expect(statuses).toEqual([500, 500, 500, 500]);
    },
  );

  it.each([
    ['@tollgate/fetch', 'fetch', '/ioredis/slot'],
    ['@tollgate/hono', 'hono', '/slot'],
  ])('%s releases a concurrency slot once the body was sent', async (_, socket, path) => {
    const client = newClient();
    const statuses = [];
    for (let sent = 0; sent < 3; sent++) statuses.push((await get(first, socket, path, client)).status);
    expect(statuses).toEqual([200, 200, 200]);
  });
});
