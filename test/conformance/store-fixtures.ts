/** The stores the conformance table runs against, each with an injected clock and a way to see its keys. */
import { MemoryStore, RedisStore, type Store } from '@tollgate/core';
import type { Cluster, Redis } from 'ioredis';
import {
  type ClientName,
  connectClient,
  connectCluster,
  connectRedis,
  uniquePrefix,
} from '../harness/clients.js';
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

/**
 * A `RedisStore` on the test Redis or Cluster, through a client of any library the store takes. The keys
 * are looked at through ioredis either way: the stores must write the same keys whichever client they use.
 */
export async function redisKind(
  topology: 'Redis' | 'Cluster',
  client: ClientName = 'ioredis',
): Promise<StoreKind> {
  const inspector: Redis | Cluster = topology === 'Redis' ? await connectRedis() : await connectCluster();
  const connection = client === 'ioredis' ? undefined : await connectClient(client, topology);
  const storeClient = connection?.client ?? inspector;
  const on = topology === 'Redis' ? '' : ' on Cluster';
  return {
    name: `RedisStore${on}${client === 'ioredis' ? '' : ` (${client})`}`,
    fixture() {
      const clock = manualClock();
      const prefix = uniquePrefix('conformance');
      const keys = () => keysUnder(inspector, prefix);
      return {
        store: new RedisStore({ client: storeClient, prefix, clock: clock.now }),
        clock,
        storedKeys: async () => (await keys()).length,
        storedTtls: async () => Promise.all((await keys()).map((key) => inspector.pttl(key))),
      };
    },
    async close() {
      inspector.disconnect();
      await connection?.close();
    },
  };
}

async function keysUnder(client: Redis | Cluster, prefix: string): Promise<string[]> {
  const nodes = 'nodes' in client ? client.nodes('master') : [client];
  return (await Promise.all(nodes.map((node) => node.keys(`${prefix}*`)))).flat();
}
