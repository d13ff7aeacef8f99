/**
 * A Sentinel failover under load: the master is killed (SIGKILL) while checks stream in through an ioredis
 * client connected through the sentinels. Every check is decided at once — by Redis, or by the insurance
 * limiter, which keeps limiting — no NOSCRIPT or READONLY reaches the app, and the promoted replica
 * decides exactly once the client has found it.
 */
import { createLimiter, type Decision, RedisStore, StoreUnavailableError } from '@tollgate/core';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FAIL_FAST, uniquePrefix, untilReady } from '../harness/clients.js';
import { commandCounts, waitFor } from '../harness/redis-server.js';
import { type SentinelSet, startSentinelSet } from '../harness/sentinel.js';

/** The store's timeout: a check with no answer by then takes the fallback. */
const TIMEOUT_MS = 500;
const LIMIT = 100;
/** The load: this many checks every `TICK_MS`, over `KEYS` keys. */
const PER_TICK = 4;
const TICK_MS = 25;
const KEYS = 2;

let set: SentinelSet;
let client: Redis;

beforeAll(async () => {
  set = await startSentinelSet();
  // What docs/production-redis.md shows for Sentinel: fail fast, and look for the new master often.
  client = new Redis({
    sentinels: [...set.sentinels],
    name: set.name,
    ...FAIL_FAST,
    retryStrategy: (times) => Math.min(times * 100, 1_000),
  });
  client.on('error', () => {}); // the store reports what matters
  await untilReady(client);
});

afterAll(async () => {
  client?.disconnect();
  await set?.stop();
});

/** One check of the load: its key, when it was asked (after the kill or not), its decision, its time. */
interface Answer {
  readonly key: string;
  readonly afterKill: boolean;
  readonly decision: Decision;
  readonly ms: number;
}

it('decides every check at once while the master dies and Sentinel promotes the replica, then exactly again', async () => {
  const logged: string[] = [];
  const logger = { warn: (line: string) => logged.push(line), error: (line: string) => logged.push(line) };
  const storeErrors: Error[] = [];
  const store = new RedisStore({ client, prefix: uniquePrefix('failover'), logger });
  const limiter = createLimiter({
    store,
    policies: { limit: LIMIT, window: '1h' },
    timeout: TIMEOUT_MS,
    onStoreError: (error) => {
      storeErrors.push(error as Error); // everything the store threw at the app
      return 'insurance';
    },
  });

  const answers: Answer[] = [];
  const pending: Promise<void>[] = [];
  let killed = false;
  let sent = 0;
  const check = async (key: string) => {
    const afterKill = killed;
    const startedMs = performance.now();
    const decision = await limiter.consume(key);
    answers.push({ key, afterKill, decision, ms: performance.now() - startedMs });
  };
  const load = setInterval(() => {
    for (let i = 0; i < PER_TICK; i++) pending.push(check(`load-${sent++ % KEYS}`));
  }, TICK_MS);
  const redisDecided = () => answers.filter((a) => !a.decision.degraded).length;
  try {
    await waitFor(async () => redisDecided() >= 20, 'Redis to decide checks of the load');
    killed = true;
    await set.master.kill();
    await set.untilMasterIs(set.replica);
    // Until the client has found the new master: the last 20 answers all Redis's again.
    await waitFor(
      async () => answers.length > 20 && answers.slice(-20).every((a) => a.afterKill && !a.decision.degraded),
      'the client to reach the promoted replica',
    );
  } finally {
    clearInterval(load);
    await Promise.all(pending);
  }

  // Every check was decided, within its timeout (and as much again for a busy machine): none waited
  // for the failover, which takes seconds.
  expect(answers.length).toBeGreaterThan(100);
  for (const { ms } of answers) expect(ms).toBeLessThan(2 * TIMEOUT_MS);
  // The insurance limiter decided while no master answered, and went on limiting: it admits at most
  // the limit per key in this process, and refused the rest.
  const degraded = answers.filter((a) => a.decision.degraded);
  expect(degraded.length).toBeGreaterThan(0);
  for (let k = 0; k < KEYS; k++) {
    const ofKey = degraded.filter((a) => a.key === `load-${k}`);
    expect(ofKey.filter((a) => a.decision.allowed).length).toBeLessThanOrEqual(LIMIT);
  }
  expect(degraded.some((a) => !a.decision.allowed)).toBe(true);

  // Nothing but "unavailable" reached the app: the promoted replica's empty script cache (NOSCRIPT) was
  // the store's to handle, and no check was sent to a read-only replica.
  expect(storeErrors.length).toBeGreaterThan(0);
  for (const error of storeErrors) expect(error).toBeInstanceOf(StoreUnavailableError);
  const surfaced = [...storeErrors.map((e) => e.message), ...logged];
  expect(surfaced.filter((text) => /NOSCRIPT|READONLY/.test(text))).toEqual([]);
  expect(logged.filter((line) => line.startsWith('[TOLLGATE_STORE_UNAVAILABLE]'))).toHaveLength(1);
  expect(logged.filter((line) => line.startsWith('[TOLLGATE_STORE_RECOVERED]'))).toHaveLength(1);
  const counts = await commandCounts(set.replica.port);
  expect(counts.eval, 'the promoted replica had no script cached: the store sent EVAL').toBeGreaterThan(0);

  // Exact again, on the promoted replica.
  const race = await Promise.all(Array.from({ length: 3 * LIMIT }, () => limiter.consume('after-failover')));
  expect(race.filter((d) => d.degraded)).toEqual([]);
  expect(race.filter((d) => d.allowed)).toHaveLength(LIMIT);
});
