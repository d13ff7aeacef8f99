/**
 * The limits of the runtime suite's app, per scenario: the app (in Bun or Deno) builds its limiters from
 * them, and the tests (in Node.js) expect their answers from the same numbers.
 */

/** The adapters the app serves each scenario through, as the first segment of its paths. */
export const ADAPTERS = ['with-rate-limit', 'check', 'hono'] as const;
export type Adapter = (typeof ADAPTERS)[number];

/** The stores a process of the app can run on, as its `TOLLGATE_STORE` says. */
export const STORE_KINDS = ['memory', 'ioredis', 'node-redis'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

/**
 * The rate limits, one limiter per adapter and scenario (named `adapter:scenario`), so scenarios never
 * share a bucket although every request comes from 127.0.0.1.
 */
export const RATE_LIMITS = {
  /** The headers and the 429: 3 a minute, one token every 20 s. */
  headers: { limit: 3, window: '1m' },
  /** Many requests at once, across processes: exactly `limit` get through. */
  exact: { limit: 10, window: '1h' },
  /** The `ip` recipe: one request, then a 429 whose body names the key it was limited by. */
  ip: { limit: 1, window: '1h' },
  /** Only failures count: a success is given back once its streamed body was sent. */
  'skip-successful': { limit: 5, window: '1h', skipSuccessfulRequests: true },
  /** Only successes count: a failure is given back once its streamed body was sent. */
  'skip-failed': { limit: 5, window: '1h', skipFailedRequests: true },
} as const;
export type RateScenario = keyof typeof RATE_LIMITS;

/** The concurrency limit: one streamed download at a time per client. */
export const CONCURRENCY_LIMIT = { limit: 1 } as const;

/** The path of a scenario's route through an adapter. */
export const scenarioPath = (adapter: Adapter, scenario: RateScenario | 'concurrency'): string =>
  `/${adapter}/${scenario}`;

/**
 * Waits until every streamed body the app started has been sent or cancelled and the store has finished
 * what their ends started (refunds, slot releases): 204, or 503 after a few seconds. Not limited.
 */
export const SETTLED_PATH = '/settled';
