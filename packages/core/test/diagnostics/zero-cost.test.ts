/**
 * Nobody subscribed, no event built: every builder of an event payload is spied on, and checks of every
 * kind (allowed, refused, dry run, skipped, deny cache, store failure, limit 0) run with and without a
 * subscriber.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  BREAKER_CLOSE_CHANNEL,
  BREAKER_OPEN_CHANNEL,
  DECISION_CHANNEL,
  DENY_CACHE_HIT_CHANNEL,
  STORE_ERROR_CHANNEL,
  subscribeTollgate,
  type TollgateChannel,
} from '../../src/diagnostics/channels.js';
import {
  breakerCloseEvent,
  breakerOpenEvent,
  decisionEvent,
  denyCacheHitEvent,
  storeErrorEvent,
  undecidedEvent,
} from '../../src/diagnostics/events.js';
import { publishBreakerClose, publishBreakerOpen } from '../../src/diagnostics/publish.js';
import { createHttpLimiter } from '../../src/http/pipeline/http-limiter.js';
import { createLimiter } from '../../src/limiter/limiter.js';
import type { Store } from '../../src/model/store.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import {
  type FakeRequest,
  failingStore,
  fakeAccess,
  recordingLogger,
  TEST_ADAPTER,
} from '../http/fixtures.js';

vi.mock('../../src/diagnostics/events.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/diagnostics/events.js')>();
  return {
    ...original,
    decisionEvent: vi.fn(original.decisionEvent),
    undecidedEvent: vi.fn(original.undecidedEvent),
    storeErrorEvent: vi.fn(original.storeErrorEvent),
    denyCacheHitEvent: vi.fn(original.denyCacheHitEvent),
    breakerOpenEvent: vi.fn(original.breakerOpenEvent),
    breakerCloseEvent: vi.fn(original.breakerCloseEvent),
  };
});

const BUILDERS = {
  decisionEvent,
  undecidedEvent,
  storeErrorEvent,
  denyCacheHitEvent,
  breakerOpenEvent,
  breakerCloseEvent,
};

/** How many payloads each builder made. */
function built(): Record<keyof typeof BUILDERS, number> {
  return Object.fromEntries(
    Object.entries(BUILDERS).map(([name, builder]) => [name, vi.mocked(builder).mock.calls.length]),
  ) as Record<keyof typeof BUILDERS, number>;
}

/** A memory store that says it is remote, so the limiter keeps a deny cache in front of it. */
function remoteStore(): Store {
  const inner = new MemoryStore();
  return { update: (request) => inner.update(request), reset: (key, p) => inner.reset(key, p) };
}

/** One check of every kind that publishes something, and both breaker events. */
async function everyKindOfCheck(): Promise<void> {
  const { logger } = recordingLogger();
  const limiter = createLimiter({ policies: { limit: 1, window: '1h' }, store: remoteStore() });
  await limiter.consume('a'); // allowed
  await limiter.consume('a'); // limited by the store
  await limiter.consume('a', { dryRun: true }); // the deny cache: dry-run-limited
  await createLimiter({
    policies: { limit: 1, window: '1h' },
    store: failingStore(new Error('down')),
  }).consume('a');
  const http = (options: object) =>
    createHttpLimiter<FakeRequest>({ limit: 1, window: '1h', logger, ...options }, fakeAccess, TEST_ADAPTER);
  await http({ skip: () => true }).check({ ip: '203.0.113.7' }); // skipped
  await http({ limit: 0 }).check({ ip: '203.0.113.7' }); // limit 0
  await http({ store: failingStore(new Error('down')), onStoreError: 'allow' }).check({ ip: '203.0.113.7' });
  publishBreakerOpen(new MemoryStore(), 'tollgate:', 'it could not connect');
  publishBreakerClose(new MemoryStore(), 'tollgate:', 1_000, 3);
}

const CHANNELS: TollgateChannel[] = [
  DECISION_CHANNEL,
  STORE_ERROR_CHANNEL,
  DENY_CACHE_HIT_CHANNEL,
  BREAKER_OPEN_CHANNEL,
  BREAKER_CLOSE_CHANNEL,
];

describe('with nobody subscribed', () => {
  beforeEach(() => vi.clearAllMocks());

  it('builds no event object at all', async () => {
    await everyKindOfCheck();
    expect(built()).toEqual({
      decisionEvent: 0,
      undecidedEvent: 0,
      storeErrorEvent: 0,
      denyCacheHitEvent: 0,
      breakerOpenEvent: 0,
      breakerCloseEvent: 0,
    });
  });
});

describe('with a subscriber on every channel', () => {
  const stops: (() => void)[] = [];
  beforeEach(() => {
    vi.clearAllMocks();
    for (const name of CHANNELS) stops.push(subscribeTollgate(name, () => {}));
  });
  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
  });

  it('builds each event once, when it happens', async () => {
    await everyKindOfCheck();
    expect(built()).toEqual({
      decisionEvent: 5, // allowed, limited, dry-run-limited (deny cache), degraded (insurance), limit 0
      undecidedEvent: 2, // skipped, degraded ('allow')
      storeErrorEvent: 2, // the failing store, twice
      denyCacheHitEvent: 1,
      breakerOpenEvent: 1,
      breakerCloseEvent: 1,
    });
  });
});
