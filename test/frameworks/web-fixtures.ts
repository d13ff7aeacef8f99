/**
 * What the fetch and Hono tests share: a response body the test streams by hand, and the two stores
 * (memory, the harness's Redis), each wrapped so a test can wait for the refunds responses set off.
 */
import { MemoryStore, RedisStore, type Store } from '@tollgate/core';
import type { Redis } from 'ioredis';
import { uniquePrefix } from '../harness/clients.js';
import { type SettlingStore, settlingStore } from './settling-store.js';

/** A body that sends what the test pushes, ends when it says so, and tells when its reader cancelled it. */
export interface ControlledBody {
  readonly body: ReadableStream<Uint8Array>;
  push(text: string): void;
  end(): void;
  /** Resolves once the body's reader cancelled it (the runtime, when the client went away). */
  readonly cancelled: Promise<void>;
}

export function controlledBody(): ControlledBody {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let cancel!: () => void;
  const cancelled = new Promise<void>((resolve) => {
    cancel = resolve;
  });
  const body = new ReadableStream<Uint8Array>({
    start(given) {
      controller = given;
    },
    cancel,
  });
  return {
    body,
    cancelled,
    push: (text) => controller.enqueue(new TextEncoder().encode(text)),
    end: () => controller.close(),
  };
}

/**
 * The stores the tests run on: a fresh store of each kind, settling (for rate limits, whose refunds a
 * test waits for), and as it is (`leases`, for concurrency limits, which the settling one does not pass on).
 */
export function storeKinds(
  redis: () => Redis,
): { name: string; create(): SettlingStore & { leases: Store } }[] {
  const kinds = [
    { name: 'MemoryStore', open: () => new MemoryStore() },
    { name: 'RedisStore', open: () => new RedisStore({ client: redis(), prefix: uniquePrefix('web') }) },
  ];
  return kinds.map(({ name, open }) => ({
    name,
    create() {
      const leases = open();
      return { ...settlingStore(leases), leases };
    },
  }));
}

/** A logger that keeps what it is told, for assertions on warning codes. */
export function keptLog(): {
  lines: string[];
  logger: { warn(line: string): void; error(line: string): void };
} {
  const lines: string[] = [];
  const keep = (line: string) => void lines.push(line);
  return { lines, logger: { warn: keep, error: keep } };
}
