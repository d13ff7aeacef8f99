/**
 * The outage tests of `redis-outage.test.ts` and `slow-redis.test.ts`, run through every client library
 * the store takes (ioredis, iovalkey, node-redis 4 to 6, Valkey GLIDE), each on a Redis of its own: a
 * Redis that dies and comes back, and one that stops answering (CLIENT PAUSE). Every check is answered
 * within the limiter's timeout, from the insurance limiter meanwhile; nothing sent while Redis was away
 * runs later; Redis decides again once it is back; the incident is logged once each way.
 */
import { createLimiter, type Decision, RedisStore } from '@tollgate/core';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import {
  CLIENT_NAMES,
  type ClientConnection,
  type ClientName,
  connectClient,
  connectGlide,
  connectRedis,
  uniquePrefix,
} from '../harness/clients.js';
import { commandCounts, type RedisProcess, startRedisServer } from '../harness/redis-server.js';

/** The limiters' timeout; GLIDE's `requestTimeout` is set to it, as the core README recommends. */
const TIMEOUT_MS = 500;
/** How late past its timeout an answer may come on a busy test machine. */
const SLACK_MS = 250;

/** A client of `name` of the server at `url`, made as the READMEs recommend. */
async function connect(name: ClientName, url: string, timeoutMs = TIMEOUT_MS): Promise<ClientConnection> {
  if (name !== 'valkey-glide') return connectClient(name, 'Redis', { url });
  const client = await connectGlide(url, { requestTimeout: timeoutMs });
  return { client, close: async () => client.close() };
}

function recorder() {
  const lines: string[] = [];
  const count = (code: string) => lines.filter((line) => line.startsWith(`[${code}]`)).length;
  return {
    count,
    logger: { warn: (line: string) => lines.push(line), error: (line: string) => lines.push(line) },
  };
}

/** `count` checks of `key` at once, each with how long it took to be answered. */
function burst(consume: (key: string) => Promise<Decision>, count: number, key: string) {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const started = performance.now();
      const decision = await consume(key);
      return { decision, ms: performance.now() - started };
    }),
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(CLIENT_NAMES)('RedisStore on %s when Redis dies and comes back', (name) => {
  it('answers from the insurance within the timeout, replays nothing, and decides on Redis again', async () => {
    let server: RedisProcess = await startRedisServer();
    const { port } = server;
    const connection = await connect(name, server.url);
    const { count, logger } = recorder();
    const store = new RedisStore({
      client: connection.client,
      prefix: uniquePrefix('dies'),
      logger,
      breaker: { cooldown: 200 },
    });
    const limiter = createLimiter({ store, policies: { limit: 5, window: '1h' }, timeout: TIMEOUT_MS });
    const consume = (key: string) => limiter.consume(key);
    try {
      expect((await consume('a')).degraded).toBe(false); // connected, and the clock offset is known
      const inFlight = burst(consume, 10, 'a'); // Redis dies while these are on their way
      await server.kill();
      const answers = [...(await inFlight), ...(await burst(consume, 10, 'a'))];
      await sleep(300); // past the breaker's cooldown: one probe goes, and fails
      const during = [...(await burst(consume, 10, 'a')), ...(await burst(consume, 10, 'a'))];
      for (const { ms } of [...answers, ...during]) expect(ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
      expect(during.every(({ decision }) => decision.degraded)).toBe(true);
      // The insurance limiter admits at most the limit in this process.
      expect(during.filter(({ decision }) => decision.allowed).length).toBeLessThanOrEqual(5);
      expect(count('TOLLGATE_STORE_UNAVAILABLE')).toBe(1);

      await sleep(TIMEOUT_MS + 200); // whatever a client held for the connection, it has given up by now
      server = await startRedisServer([], port);
      await sleep(1_500); // the clients reconnect: a queue would be flushed now
      // Nothing sent while Redis was away reached the new server.
      const counts = await commandCounts(port);
      expect(counts.evalsha ?? 0).toBe(0);
      expect(counts.eval ?? 0).toBe(0);

      // Redis decides again (for GLIDE, which tells nothing of its connection, after the breaker's
      // cooldown lets a probe through): the new server counts client b from a fresh bucket.
      let decision = await consume('b');
      for (const deadline = Date.now() + 10_000; decision.degraded && Date.now() < deadline; ) {
        await sleep(50);
        decision = await consume('b');
      }
      expect(decision.degraded).toBe(false);
      expect(decision.decidedBy.remaining).toBe(4);
      expect(count('TOLLGATE_STORE_RECOVERED')).toBe(1);
    } finally {
      await connection.close();
      await server.stop();
    }
  }, 30_000);
});

describe.each(CLIENT_NAMES)('RedisStore on %s when Redis stops answering', (name) => {
  it('gives up at the timeout, answers from the insurance, and the late scripts change nothing', async () => {
    const server = await startRedisServer();
    const timeoutMs = 300;
    const connection = await connect(name, server.url, timeoutMs);
    const admin: Redis = await connectRedis(server.url);
    const { count, logger } = recorder();
    // The pause outlasts timeout + cooldown, so the breaker probes again as soon as Redis resumes.
    const store = new RedisStore({
      client: connection.client,
      prefix: uniquePrefix('paused'),
      logger,
      breaker: { cooldown: 800 },
    });
    const limiter = createLimiter({ store, policies: { limit: 10, window: '1h' }, timeout: timeoutMs });
    const consume = (key: string) => limiter.consume(key);
    try {
      expect((await consume('warm')).degraded).toBe(false); // the clock offset is known from here on
      // A check alone and a batch run different scripts: both are loaded from here on.
      await Promise.all([consume('warm'), consume('warm')]);
      const before = await commandCounts(server.port);

      await admin.call('CLIENT', 'PAUSE', '1500', 'ALL');
      const waited = await burst(consume, 5, 'k');
      for (const { decision, ms } of waited) {
        expect(decision.degraded && decision.allowed).toBe(true);
        expect(ms).toBeLessThan(timeoutMs + SLACK_MS); // their timeout, not the pause
      }
      const fast = await burst(consume, 5, 'k');
      expect(fast.every(({ decision, ms }) => decision.degraded && ms < 50)).toBe(true); // the breaker is open
      expect(count('TOLLGATE_STORE_UNAVAILABLE')).toBe(1);

      await admin.ping(); // answered once the pause is over, after what was sent before it
      await sleep(100);
      // The first five went to Redis as one script call, and no client sent it again; the breaker sent
      // none of the second five…
      const during = await commandCounts(server.port);
      expect((during.evalsha ?? 0) - (before.evalsha ?? 0)).toBe(1);
      expect((during.eval ?? 0) - (before.eval ?? 0)).toBe(0);
      // …and, run after their deadline, they charged nothing.
      const after = await consume('k');
      expect(after.degraded).toBe(false);
      expect(after.decidedBy.remaining).toBe(9);
      expect(count('TOLLGATE_STORE_RECOVERED')).toBe(1);
    } finally {
      admin.disconnect();
      await connection.close();
      await server.stop();
    }
  }, 30_000);
});
