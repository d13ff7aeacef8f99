/** Data of the outage picture: three app servers share one store, which goes down for a while and comes back. */
import { seededRandom } from '@tollgate/bench/stats.js';
import { createLimiter, type Limiter, MemoryStore } from '@tollgate/core';
import { FlakyStore } from './flaky-store.js';
import { virtualClock } from './virtual-clock.js';

/** The outage run's setup: its length, the outage, the servers, their traffic and the shared limit. */
export const OUTAGE = {
  durationMs: 60_000,
  /** The shared store is down from `downFromMs` (included) to `downToMs` (excluded). */
  downFromMs: 20_000,
  downToMs: 40_000,
  servers: 3,
  /** What each server sends for the one client: together, twice the limit. */
  requestsPerSecPerServer: 20,
  /** The shared limit: 30 per second (a token bucket; its burst is the limit). */
  limit: 30,
} as const;

/** What one app server admitted in one second of the run. */
export interface ServerSecond {
  readonly server: string;
  /** Start of the second, from the start of the run. */
  readonly second: number;
  readonly admitted: number;
  /** Of those, admitted by the server's own insurance limiter while the store was down. */
  readonly degraded: number;
}

interface Arrival {
  readonly atMs: number;
  readonly server: number;
}

/**
 * Each server's requests, in time order: one in each slot of `1000 / rate` ms, at a point in it drawn from
 * a seeded generator. Evenly spaced requests would lock in step with the bucket's refill, so that one
 * server always came first and another never did; real traffic is not that regular.
 */
function arrivals(): Arrival[] {
  const random = seededRandom(7);
  const gapMs = 1000 / OUTAGE.requestsPerSecPerServer;
  const list: Arrival[] = [];
  for (let server = 0; server < OUTAGE.servers; server++) {
    for (let slotMs = 0; slotMs < OUTAGE.durationMs; slotMs += gapMs) {
      list.push({ atMs: Math.floor(slotMs + random() * gapMs), server });
    }
  }
  return list.sort((a, b) => a.atMs - b.atMs || a.server - b.server);
}

/**
 * Runs {@link OUTAGE}: one limiter per server (each with its own insurance, `instances: 3`) on one shared
 * store that fails during the outage, all on one virtual clock. The store rejects at once, so no
 * `timeout` is involved (`timeout: false`: nothing waits on wall-clock time).
 *
 * @example
 * const seconds = await outageRun(); // 3 servers × 60 seconds
 */
export async function outageRun(): Promise<ServerSecond[]> {
  const clock = virtualClock();
  const isDown = () => clock.atMs() >= OUTAGE.downFromMs && clock.atMs() < OUTAGE.downToMs;
  const store = new FlakyStore(new MemoryStore({ clock: clock.now }), isDown);
  const limiters: Limiter[] = Array.from({ length: OUTAGE.servers }, () =>
    createLimiter({
      store,
      policies: { limit: OUTAGE.limit, window: '1s' },
      namespace: 'api',
      onStoreError: 'insurance',
      insurance: { instances: OUTAGE.servers },
      timeout: false,
    }),
  );
  const counts = new Map<string, { server: string; second: number; admitted: number; degraded: number }>();
  for (const { atMs, server } of arrivals()) {
    clock.set(atMs);
    const decision = await (limiters[server] as Limiter).consume('client');
    const second = Math.floor(atMs / 1000);
    const name = `App server ${server + 1}`;
    const count = counts.get(`${name}/${second}`) ?? { server: name, second, admitted: 0, degraded: 0 };
    if (decision.allowed) count.admitted++;
    if (decision.allowed && decision.degraded) count.degraded++;
    counts.set(`${name}/${second}`, count);
  }
  return [...counts.values()];
}
