import { describe, expect, it } from 'vitest';
import { createConcurrencyLimiter } from '../../../src/limiter/concurrency-limiter.js';
import { LeaseTable } from '../../../src/stores/memory/lease-table.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';

function clockAt(startMs: number) {
  const clock = { nowMs: startMs, now: () => clock.nowMs };
  return clock;
}

const TTL_MS = 60_000;

/** Takes a lease on `key` (limit 2), as a concurrency limiter does. */
async function acquire(store: MemoryStore, key: string, ttlMs = TTL_MS, id = `${key}#1`) {
  return store.lease({ key, mode: 'acquire', leaseId: id, limit: 2, ttlMs });
}

/** The leases `key` holds, read by ending a lease it never had: that changes nothing. */
async function held(store: MemoryStore, key: string): Promise<number> {
  return (await store.lease({ key, mode: 'release', leaseId: 'never-taken', limit: 2, ttlMs: TTL_MS })).held;
}

describe('MemoryStore under leases scans every key (regression)', () => {
  it('holds leases for at most maxKeys keys through 5000 new keys, the newest ones', async () => {
    const clock = clockAt(1_000_000);
    const store = new MemoryStore({ maxKeys: 1000, clock: clock.now });
    for (let i = 0; i < 6000; i++) {
      clock.nowMs++;
      expect((await acquire(store, `key-${i}`)).applied).toBe(true);
    }
    // Every lease is live (1 minute, 6 s gone): the keys whose leases end soonest, the oldest, went.
    let keysHolding = 0;
    for (let i = 0; i < 6000; i++) if ((await held(store, `key-${i}`)) > 0) keysHolding++;
    expect(keysHolding).toBe(1000);
    expect(await held(store, 'key-4999')).toBe(0);
    expect(await held(store, 'key-5000')).toBe(1);
  });

  it('keeps the lease table at maxKeys after every acquire, its heap holding exactly the keys with leases', () => {
    const table = new LeaseTable(1000);
    let nowMs = 1_000_000;
    for (let i = 0; i < 6000; i++) {
      table.lease('acquire', `key-${i}`, 'a', 2, TTL_MS, ++nowMs);
      if (table.size !== Math.min(i + 1, 1000)) throw new Error(`${table.size} keys after ${i + 1}`);
    }
    let keysHolding = 0;
    for (let i = 0; i < 6000; i++) {
      if (table.lease('release', `key-${i}`, 'never-taken', 2, TTL_MS, nowMs).held > 0) keysHolding++;
    }
    expect(keysHolding).toBe(table.size);
  });
});

describe('MemoryStore leases when the table is full', () => {
  it('takes the leases of the key whose last lease ends soonest, one below its limit first', async () => {
    const clock = clockAt(1_000_000);
    const store = new MemoryStore({ maxKeys: 3, clock: clock.now });
    await acquire(store, 'at-limit', 10_000, 'a');
    await acquire(store, 'at-limit', 10_000, 'b'); // holds both it may: evicted last
    await acquire(store, 'soon', 20_000);
    await acquire(store, 'late', 30_000);
    await acquire(store, 'new-1'); // evicts soon
    expect([await held(store, 'at-limit'), await held(store, 'soon'), await held(store, 'late')]).toEqual([
      2, 0, 1,
    ]);
    await acquire(store, 'new-2'); // then late, though at-limit's leases end sooner
    expect([await held(store, 'at-limit'), await held(store, 'late')]).toEqual([2, 0]);
  });

  it('when every key is at its limit, takes the leases of the one whose last lease ends soonest', async () => {
    const clock = clockAt(1_000_000);
    const store = new MemoryStore({ maxKeys: 2, clock: clock.now });
    for (const id of ['a', 'b']) await acquire(store, 'late', 20_000, id);
    for (const id of ['a', 'b']) await acquire(store, 'soon', 10_000, id);
    await acquire(store, 'new');
    expect([await held(store, 'late'), await held(store, 'soon'), await held(store, 'new')]).toEqual([
      2, 0, 1,
    ]);
  });

  it('frees the slot of a released or expired lease before taking live leases', async () => {
    const clock = clockAt(1_000_000);
    const store = new MemoryStore({ maxKeys: 2, clock: clock.now });
    const jobs = createConcurrencyLimiter({ store, limit: 1, leaseTtl: '30s', onStoreError: 'throw' });
    const a = await jobs.acquire('a');
    await jobs.acquire('b');
    await a.lease?.release(); // frees a's slot
    await jobs.acquire('c');
    expect((await jobs.acquire('b')).acquired).toBe(false); // b kept its lease
    clock.nowMs += 30_000; // b's and c's leases expire, never released
    await jobs.acquire('d');
    const e = await jobs.acquire('e');
    expect(e.held).toBe(1);
    expect((await jobs.acquire('d')).acquired).toBe(false); // d kept its lease: e took an expired slot
    expect((await jobs.acquire('e')).acquired).toBe(false);
  });
});
