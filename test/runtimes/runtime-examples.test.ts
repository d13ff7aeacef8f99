/**
 * examples/bun and examples/deno run as their READMEs say, `pnpm start` in their folder, in memory and on
 * the suite's Redis, and answer as their printed curl lines promise.
 */
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort, runtimeEnv, type ServerProcess, startServer } from './runtime-process.js';

const examples = [
  { name: 'bun', prefix: 'tollgate:example-bun:' },
  { name: 'deno', prefix: 'tollgate:example-deno:' },
] as const;
const stores = ['memory', 'Redis'] as const;

const runs = examples.flatMap((example) => stores.map((store) => ({ ...example, store })));
const servers = new Map<string, ServerProcess>();
const runName = ({ name, store }: (typeof runs)[number]) => `${name} on ${store}`;

/** Starts `pnpm start` in the example's folder, on a free port, with `REDIS_URL` for the Redis runs. */
async function start(run: (typeof runs)[number]): Promise<ServerProcess> {
  const port = await freePort();
  return startServer('pnpm', ['start'], {
    cwd: fileURLToPath(new URL(`../../examples/${run.name}/`, import.meta.url)),
    env: runtimeEnv({ PORT: String(port), ...(run.store === 'Redis' && { REDIS_URL: inject('redisUrl') }) }),
    ready: /example on (http:\/\/127\.0\.0\.1:\d+), store: /,
    timeoutMs: 60_000,
  });
}

beforeAll(async () => {
  // The examples' Redis prefixes are fixed: a run before this one, on a REDIS_URL of the user's, must not
  // have used up their limits.
  const redis = new Redis(inject('redisUrl'));
  for (const { prefix } of examples) {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  }
  redis.disconnect();
  const started = runs.map(async (run) => servers.set(runName(run), await start(run)));
  // Every server is stopped in afterAll, those that started before another failed to included.
  const failed = (await Promise.allSettled(started)).find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
}, 120_000);

afterAll(async () => {
  await Promise.all([...servers.values()].map((server) => server.stop()));
});

describe.each(runs)('examples/$name on $store', (run) => {
  it('says where it listens and on which store', () => {
    const { url, stdout } = servers.get(runName(run)) as ServerProcess;
    expect(stdout()).toContain(`curl -i ${url}/`);
    expect(stdout()).toContain(run.store === 'memory' ? 'store: memory' : 'store: Redis at 127.0.0.1:');
  });

  it('limits logins, keys the API by API key, and leaves /health alone', async () => {
    const { url } = servers.get(runName(run)) as ServerProcess;
    const logins = [];
    for (let i = 0; i < 4; i++) logins.push((await fetch(`${url}/login`, { method: 'POST' })).status);
    expect(logins).toEqual([200, 200, 200, 429]);
    const health = await fetch(`${url}/health`);
    expect([health.status, health.headers.get('ratelimit')]).toEqual([200, null]);
    const api = await fetch(`${url}/api/widgets`, { headers: { 'x-api-key': 'demo-key-1' } });
    expect(api.status).toBe(200);
    expect(api.headers.get('ratelimit')).toContain('"5-per-1m";r=4');
    expect(await api.json()).toEqual({ widgets: ['sprocket', 'flange'] });
  });
});
