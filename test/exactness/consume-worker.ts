/**
 * One of several processes racing on one key: waits for "go" on stdin, fires its share of `consume`
 * calls at once, and prints how many were allowed.
 * argv: client target prefix calls [algorithm] [overrides]
 * - client and target: see `worker-clients.ts`
 * - algorithm: the policy's, `token-bucket` by default
 * - overrides: `overrides` for a limiter that reads the key's override
 */
import { type AlgorithmName, createLimiter, RedisStore } from '@tollgate/core';
import { connectWorkerClient } from './worker-clients.js';

const [client = '', target = '', prefix = '', calls = '0', algorithm = 'token-bucket', overrides = ''] =
  process.argv.slice(2);

const { client: redis, close } = await connectWorkerClient(client, target); // connected before the race starts
const limiter = createLimiter({
  store: new RedisStore({ client: redis, prefix }),
  policies: { limit: 100, window: '1h', algorithm: algorithm as AlgorithmName },
  onStoreError: 'throw', // a store error must fail the race, not be taken by the insurance limiter
  overrides: overrides === 'overrides',
});

process.stdout.write('ready\n');
process.stdin.once('data', async () => {
  const decisions = await Promise.all(
    Array.from({ length: Number(calls) }, () => limiter.consume('shared-key')),
  );
  process.stdout.write(`${JSON.stringify({ allowed: decisions.filter((d) => d.allowed).length })}\n`);
  await close();
  process.exit(0);
});
