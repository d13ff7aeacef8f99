/** Test doubles for the HTTP layer: a plain request object, its access, a clock, a logger and faulty stores. */

import type { RequestAccess } from '../../src/http/identity/request-keys.js';
import type { AdapterSettings } from '../../src/http/options/option-types.js';
import type { BucketResult, Store } from '../../src/model/store.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import type { Logger } from '../../src/support/warnings.js';

/** A request as the tests write it: what the framework would have resolved, and lower-case headers. */
export interface FakeRequest {
  readonly ip?: string;
  readonly socketIp?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly user?: string | number | null | undefined;
  readonly plan?: 'free' | 'pro';
}

/** Reads a {@link FakeRequest} the way an adapter's access reads its framework's request. */
export const fakeAccess: RequestAccess<FakeRequest> = {
  ip: (request) => request.ip,
  socketIp: (request) => request.socketIp ?? request.ip,
  header: (request, name) => request.headers?.[name],
};

/** The adapter settings of every test limiter. */
export const TEST_ADAPTER: AdapterSettings = { adapter: '@tollgate/test' };

/** A clock the test moves by hand, in ms since the epoch. */
export function clockAt(startMs: number) {
  const clock = { nowMs: startMs, now: () => clock.nowMs };
  return clock;
}

/** A memory store on a hand-moved clock. */
export function storeOnClock(startMs = 1_700_000_000_000) {
  const clock = clockAt(startMs);
  return { clock, store: new MemoryStore({ clock: clock.now }) };
}

/** A logger that records what it was given. */
export function recordingLogger() {
  const warnings: string[] = [];
  const errors: string[] = [];
  const logger: Logger = {
    warn: (message) => warnings.push(message),
    error: (message) => errors.push(message),
  };
  return { logger, warnings, errors };
}

/** A fault-injecting store whose every update rejects with `error`. */
export function failingStore(error: Error): Store & { readonly calls: number } {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    async update(): Promise<BucketResult> {
      calls++;
      throw error;
    },
    async reset() {},
  };
}

/** A fault-injecting store whose updates never settle, like a Redis that stopped answering. */
export function silentStore(): Store {
  return {
    update: () => new Promise<BucketResult>(() => {}),
    reset: async () => {},
  };
}
