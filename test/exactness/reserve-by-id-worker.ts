/**
 * A process of the reservations-by-id test, on one key of a limiter of 60,000 tokens a minute (`maxOpen`
 * 21), its store's clock standing still at `nowMs`.
 * argv: role client target prefix nowMs arg
 * - client: `ioredis` (auto-pipelining) or `ioredis-plain`
 * - `reserve`: reserves `job-0` … `job-19` (100 tokens each, ttl 1 minute) and `orphan` (ttl 1 s), then
 *   one more past maxOpen; prints what it got, and waits, never settling, to be killed.
 * - `settle`: waits for "go" on stdin, then settles every job `arg` times at once (the true cost a
 *   function of the job and of this process); prints each settle's answer and the true cost it gave.
 */
import { createLimiter, RedisStore } from '@tollgate/core';
import { Cluster, Redis } from 'ioredis';

const [role = '', clientName = '', target = '', prefix = '', nowArg = '0', arg = '1'] = process.argv.slice(2);
const nowMs = Number(nowArg);
// ioredis alone (with auto-pipelining or without): a worker that loads every client starts seconds later.
const nodes = target.startsWith('cluster:')
  ? (JSON.parse(target.slice('cluster:'.length)) as { host: string; port: number }[])
  : undefined;
const failFast = { enableAutoPipelining: clientName === 'ioredis', enableOfflineQueue: false } as const;
const client = nodes
  ? new Cluster(nodes, { ...failFast, redisOptions: { maxRetriesPerRequest: 0 } })
  : new Redis(target, { ...failFast, maxRetriesPerRequest: 0 });
await new Promise((resolve) => client.once('ready', resolve));
const limiter = createLimiter({
  store: new RedisStore({ client, prefix, clock: () => nowMs }),
  policies: { limit: 60_000, window: '1m' },
  namespace: 'gateway',
  maxOpen: 21,
  onStoreError: 'throw', // a store error must fail the test, not be taken by the insurance limiter
});
const JOBS = Array.from({ length: 20 }, (_, i) => `job-${i}`);

if (role === 'reserve') {
  const reserved: string[] = [];
  for (const id of [...JOBS, 'orphan']) {
    const { decision } = await limiter.reserve('tenant', 100, { id, ttl: id === 'orphan' ? '1s' : '1m' });
    if (decision.allowed) reserved.push(id);
  }
  const extra = await limiter.reserve('tenant', 100, { id: 'extra' });
  process.stdout.write(`${JSON.stringify({ reserved, extra: extra.decision.reason })}\n`);
  setInterval(() => {}, 60_000); // holds its reservations open until it is killed
} else {
  const offset = Number(arg === '2' ? 1 : 2); // the two settling processes give other true costs
  process.stdout.write('ready\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  const settles = await Promise.all(
    JOBS.map(async (id, i) => {
      const actual = (i * 37 + offset * 11) % 250; // below and above the 100 reserved
      const times = Array.from({ length: Number(arg) }, () => limiter.settle('tenant', id, actual));
      const answers = await Promise.all(times);
      return { id, actual, settled: answers.filter((answer) => answer.settled).length };
    }),
  );
  process.stdout.write(`${JSON.stringify(settles)}\n`);
  process.exit(0);
}
