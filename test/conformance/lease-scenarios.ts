/**
 * The concurrency limiter's table: every scenario runs unchanged on every store (memory, Redis, Redis
 * Cluster, node-redis), under an injected clock.
 */
import { createConcurrencyLimiter } from '@tollgate/core';
import { expect } from 'vitest';
import type { StoreFixture } from './store-fixtures.js';

export interface LeaseScenario {
  readonly name: string;
  run(fixture: StoreFixture): Promise<void>;
}

export const leaseScenarios: LeaseScenario[] = [
  {
    name: 'holds at most the limit at once; a release frees one slot, twice frees nothing more',
    async run({ store }) {
      const uploads = createConcurrencyLimiter({ store, limit: 2, onStoreError: 'throw' });
      const first = await uploads.acquire('k');
      const second = await uploads.acquire('k');
      expect([first.acquired, second.acquired, first.held, second.held]).toEqual([true, true, 1, 2]);
      expect(await uploads.acquire('k')).toMatchObject({ acquired: false, held: 2, lease: undefined });
      await first.lease?.release();
      await first.lease?.release();
      expect((await uploads.acquire('k')).acquired).toBe(true);
      expect((await uploads.acquire('k')).acquired).toBe(false);
      expect((await uploads.acquire('other')).acquired).toBe(true); // keys never share slots
    },
  },
  {
    name: 'a lease never released stops counting after its time to live',
    async run({ store, clock }) {
      const jobs = createConcurrencyLimiter({ store, limit: 1, leaseTtl: '30s', onStoreError: 'throw' });
      const held = await jobs.acquire('k');
      expect(held.acquired).toBe(true); // and its holder crashes: never released
      clock.advance(29_999);
      expect((await jobs.acquire('k')).acquired).toBe(false);
      clock.advance(1);
      const next = await jobs.acquire('k');
      expect(next).toMatchObject({ acquired: true, held: 1 });
      await held.lease?.release(); // late, and harmless: the slot is next's
      expect((await jobs.acquire('k')).acquired).toBe(false);
    },
  },
  {
    name: 'namespaces keep limiters apart, and leases apart from rate-limit buckets',
    async run({ store }) {
      const a = createConcurrencyLimiter({ store, limit: 1, namespace: 'a', onStoreError: 'throw' });
      const b = createConcurrencyLimiter({ store, limit: 1, namespace: 'b', onStoreError: 'throw' });
      expect((await a.acquire('k')).acquired).toBe(true);
      expect((await b.acquire('k')).acquired).toBe(true);
      expect((await a.acquire('k')).acquired).toBe(false);
    },
  },
  {
    name: 'keys with braces keep their leases, each in its own slot',
    async run({ store }) {
      const limiter = createConcurrencyLimiter({ store, limit: 1, onStoreError: 'throw' });
      for (const key of ['}', '{x}', 'a}b']) {
        expect((await limiter.acquire(key)).acquired, key).toBe(true);
        expect((await limiter.acquire(key)).acquired, key).toBe(false);
      }
    },
  },
];
