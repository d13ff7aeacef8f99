/** The stores the conformance table runs against, each with an injected clock and a way to see its keys. */
import { MemoryStore, RedisStore, type Store } from '@tollgate/core';
import type { Cluster, Redis } from 'ioredis';
import { connectCluster, connectRedis, uniquePrefix } from '../harness/clients.js';
import { type ManualClock, manualClock } from '../harness/manual-clock.js';

/** A fresh store for one scenario, its clock, and what the scenario may ask of its storage. */
export interface StoreFixture {
  readonly store: Store;
  readonly clock: ManualClock;
  /** How many keys the store holds now: one per identity with buckets that are not full. */
  storedKeys(): Promise<number>;
  /** The remaining lifetime in ms of each stored key; only stores with expiring keys have it. */
  readonly storedTtls?: () => Promise<number[]>;
}

/** Builds fixtures of one kind of store; `close` releases connections. */
export interface StoreKind {
  readonly name: string;
  fixture(): StoreFixture;
  close(): Promise<void>;
}

export function memoryKind(): StoreKind {
  return {
    name: 'MemoryStore',
    fixture() {
      const clock = manualClock();
      const store = new MemoryStore({ clock: clock.now });
      return { store, clock, storedKeys: async () => store.size };
    },
    close: async () => {},
  };
}

export async function redisKind(name: 'RedisStore' | 'RedisStore on Cluster'): Promise<StoreKind> {
  const client: Redis | Cluster = name === 'RedisStore' ? await connectRedis() : await connectCluster();
  return {
    name,
    fixture() {
      const clock = manualClock();
      const prefix = uniquePrefix('conformance');
      return {
        store: new RedisStore({ client, prefix, clock: clock.now }),
        clock,
        storedKeys: async () => (await keysUnder(client, prefix)).length,
        storedTtls: async () => Promise.all((await keysUnder(client, prefix)).map((key) => client.pttl(key))),
      };
    },
    async close() {
      client.disconnect();
    },
  };
}

async function keysUnder(client: Redis | Cluster, prefix: string): Promise<string[]> {
  const nodes = 'nodes' in client ? client.nodes('master') : [client];
  return (await Promise.all(nodes.map((node) => node.keys(`${prefix}*`)))).flat();
}
