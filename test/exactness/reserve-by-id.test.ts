/**
 * Reservations by id across processes: process A reserves 21 reservations by id on one key and is killed
 * (SIGKILL) before it settles any; process B settles each twice at once, and process C once, at the
 * same time, each at its own true cost. Every reservation is settled exactly once (one settle of the
 * three says so), and the key's bucket holds exactly the true costs of the settles that won, plus the
 * reserved cost of the one nobody settled; that one, past its ttl, is forgotten and stays charged. On
 * one Redis and on a Redis Cluster.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createLimiter, RedisStore } from '@tollgate/core';
import { describe, expect, inject, it } from 'vitest';
import { connectCluster, connectRedis, uniquePrefix } from '../harness/clients.js';

const WORKER = fileURLToPath(new URL('./reserve-by-id-worker.ts', import.meta.url));
/** The instant the workers' stores decide at: no refill, so the bucket shows what was charged. */
const FROZEN_MS = 1_767_225_600_000;

interface Settle {
  readonly id: string;
  readonly actual: number;
  /** How many of this process's settles of the id said they settled it. */
  readonly settled: number;
}

function startWorker(role: string, client: string, target: string, prefix: string, arg = '1') {
  const argv = [WORKER, role, client, target, prefix, String(FROZEN_MS), arg];
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', ...argv], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  /** Resolves with the first line that `match`es, rejecting if the process exits first. */
  const line = (match: (line: string) => boolean) =>
    new Promise<string>((resolve, reject) => {
      const look = () => {
        const found = output.split('\n').find(match);
        if (found !== undefined) resolve(found);
      };
      child.stdout?.on('data', look);
      look();
      child.once('exit', (code) => reject(new Error(`${role} worker exited with ${code}: ${output}`)));
    });
  return { child, line };
}

const TARGETS = [
  { name: 'one Redis', target: () => inject('redisUrl'), connect: () => connectRedis() },
  {
    name: 'a Redis Cluster',
    target: () => `cluster:${JSON.stringify(inject('redisClusterNodes'))}`,
    connect: () => connectCluster(),
  },
] as const;

describe.concurrent.each(TARGETS)('reservations by id across processes on $name', ({ target, connect }) => {
  it('reserved in a process killed before it settles, settled by two others three times: charged once', async () => {
    const prefix = uniquePrefix('reserve-by-id');
    const a = startWorker('reserve', 'ioredis', target(), prefix);
    const b = startWorker('settle', 'ioredis-plain', target(), prefix, '2');
    const c = startWorker('settle', 'ioredis', target(), prefix, '1');
    const reservedLine = await a.line((line) => line.startsWith('{'));
    const exited = once(a.child, 'exit');
    a.child.kill('SIGKILL');
    expect((await exited)[1]).toBe('SIGKILL');
    const { reserved, extra } = JSON.parse(reservedLine) as { reserved: string[]; extra: string };
    expect(reserved).toHaveLength(21);
    expect(extra).toBe('too-many-open'); // maxOpen 21: refused, uncharged

    await Promise.all([b.line((line) => line === 'ready'), c.line((line) => line === 'ready')]);
    b.child.stdin?.write('go\n');
    c.child.stdin?.write('go\n');
    const [fromB, fromC] = await Promise.all(
      [b, c].map(async ({ line }) => JSON.parse(await line((l) => l.startsWith('['))) as Settle[]),
    );
    let expected = 100; // the orphan, never settled, stays charged what it reserved
    for (const [i, settleB] of (fromB as Settle[]).entries()) {
      const settleC = (fromC as Settle[])[i] as Settle;
      expect(settleB.settled + settleC.settled, settleB.id).toBe(1); // one settle of three moved it
      expected += settleB.settled === 1 ? settleB.actual : settleC.actual;
    }

    const client = await connect();
    try {
      const at = (nowMs: number) =>
        createLimiter({
          store: new RedisStore({ client, prefix, clock: () => nowMs }),
          policies: { limit: 60_000, window: '1m' },
          namespace: 'gateway',
          denyCache: false,
        });
      // One token a millisecond: the wait for a full bucket is the tokens charged, owed ones included.
      const frozen = at(FROZEN_MS);
      expect((await frozen.peek('tenant', { cost: 60_000 })).retryAfterMs).toBe(expected);
      const later = at(FROZEN_MS + 1_000); // the orphan's ttl has ended: forgotten, not given back
      expect(await later.settle('tenant', 'orphan', 0)).toEqual({ settled: false, reason: 'unknown' });
      expect(await later.settle('tenant', 'job-0', 0)).toEqual({ settled: false, reason: 'settled' });
      expect((await later.peek('tenant', { cost: 60_000 })).retryAfterMs).toBe(expected - 1_000);
    } finally {
      client.disconnect();
    }
  }, 30_000);
});
