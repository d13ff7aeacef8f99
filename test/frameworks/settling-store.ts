/**
 * A store wrapper that knows when its store is idle, so a test can wait for what happens after a
 * response (a refund on 'close') before its next request, instead of sleeping and hoping.
 */

import { setImmediate as nextTurn } from 'node:timers/promises';
import type { BucketRequest, BucketResult, OverrideRequest, ResolvedPolicy, Store } from '@tollgate/core';

type Override = NonNullable<Store['override']>;

/** A store, and a wait for every operation started on it to have finished. */
export interface SettlingStore {
  readonly store: Store;
  /** Resolves once the responses sent so far have closed and the store has finished what they started. */
  idle(): Promise<void>;
}

/** Wraps `inner`, counting the operations in flight. */
export function settlingStore(inner: Store): SettlingStore {
  let inFlight = 0;
  const track = async <T>(operation: Promise<T>): Promise<T> => {
    inFlight++;
    try {
      return await operation;
    } finally {
      inFlight--;
    }
  };
  const store: Store = {
    update: (request: BucketRequest): Promise<BucketResult> => track(inner.update(request)),
    reset: (key: string, policies: readonly ResolvedPolicy[]) => track(inner.reset(key, policies)),
    ...(inner.override
      ? { override: (request: OverrideRequest) => track((inner.override as Override)(request)) }
      : {}),
    ...(inner.local !== undefined ? { local: inner.local } : {}),
    ...(inner.enforcesTimeout !== undefined ? { enforcesTimeout: inner.enforcesTimeout } : {}),
    ...(inner.clock !== undefined ? { clock: inner.clock } : {}),
  };
  return {
    store,
    async idle() {
      // A response's 'close' comes on a later tick than the answer the client reads, and the refund it
      // starts reaches the store a few microtasks after that: a turn of the event loop covers both.
      await nextTurn();
      while (inFlight > 0) await nextTurn();
    },
  };
}
