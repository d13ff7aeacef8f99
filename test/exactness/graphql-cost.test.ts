/**
 * The GraphQL cost limit exact across processes: two processes serve one schema on one Redis, each in
 * GraphQL Yoga, Apollo Server and Mercurius, and for each kind a client fires queries at both at once, of estimates
 * above and below their actual costs. Afterwards the user's bucket holds exactly the sum of the actual
 * costs the admitted queries reported: every reservation and every settle was one atomic step, and no
 * refused query charged anything.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createLimiter, RedisStore } from '@tollgate/core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { post, SERVER_KINDS, type ServerKind } from '../graphql/graphql-servers.js';
import { connectRedis, uniquePrefix } from '../harness/clients.js';
import { seeded } from '../harness/seeded.js';

const WORKER = fileURLToPath(new URL('./graphql-worker.ts', import.meta.url));
const NOW_MS = 1_767_225_600_000;
/** 600 points a minute: one comes back every 100 ms of a clock that stands still. */
const LIMIT = 600;
const QUERIES_PER_PROCESS = 40;

type Urls = Record<ServerKind, string>;

async function startWorker(prefix: string): Promise<{ child: ChildProcess; urls: Urls }> {
  const argv = [WORKER, inject('redisUrl'), prefix, String(NOW_MS), String(LIMIT)];
  const child = spawn(process.execPath, ['--import', 'tsx', ...argv], { stdio: ['pipe', 'pipe', 'inherit'] });
  let output = '';
  const urls = await new Promise<Urls>((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      const ready = /^ready (\S+)$/m.exec(output);
      if (ready) resolve(JSON.parse(ready[1] as string) as Urls);
    });
    child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
  });
  return { child, urls };
}

/**
 * A query of `first` users of `posts` posts, with their (unsized) friends or not. Users come back at
 * most 3, posts at most 2, friends 12 where 10 are estimated: actual costs fall below and above.
 */
function queryOf(random: () => number): string {
  const first = 1 + Math.floor(random() * 6);
  const posts = 1 + Math.floor(random() * 4);
  const friends = random() < 0.5 ? 'friends { id }' : '';
  return `{ users(first: ${first}) { id posts(first: ${posts}) { id } ${friends} } }`;
}

describe.concurrent('the GraphQL cost limit across 2 processes on one Redis', () => {
  const prefix = uniquePrefix('graphql');
  let workers: { child: ChildProcess; urls: Urls }[] = [];
  // Workers that load three GraphQL servers and tsx take long to start while the other suites run.
  beforeAll(async () => {
    workers = await Promise.all([startWorker(prefix), startWorker(prefix)]);
  }, 120_000);
  afterAll(() => {
    for (const { child } of workers) child.stdin?.end();
  });

  it.each(SERVER_KINDS)('%s: the budget holds exactly the sum of the actual costs settled', async (kind) => {
    const random = seeded(Date.now() % 1_000_000);
    const queries = workers.flatMap(({ urls }) =>
      Array.from({ length: QUERIES_PER_PROCESS }, () => ({ url: urls[kind], query: queryOf(random) })),
    );
    const answers = await Promise.all(queries.map(({ url, query }) => post(url, 'ada', query)));
    const admitted = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(admitted.length + refused.length).toBe(answers.length);
    expect(admitted.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    const settled = admitted.reduce(
      (sum, answer) => sum + (answer.body.extensions?.cost?.actual as number),
      0,
    );
    const differed = admitted.filter(
      ({ body }) => body.extensions?.cost?.actual !== body.extensions?.cost?.requested,
    );
    expect(differed.length).toBeGreaterThan(0);

    const client = await connectRedis();
    try {
      const budget = createLimiter({
        store: new RedisStore({ client, prefix: `${prefix}${kind}:`, clock: () => NOW_MS }),
        policies: { limit: LIMIT, window: '1m' },
        namespace: 'graphql',
        denyCache: false,
      });
      // Every point missing from the bucket, owed ones included, is 100 ms of waiting for a full one.
      const { retryAfterMs } = await budget.peek('user:ada', { cost: LIMIT });
      expect((retryAfterMs as number) / 100).toBe(settled);
    } finally {
      client.disconnect();
    }
  });
});
