/**
 * Setups that are valid but probably wrong, reported once each through an injectable logger with a stable
 * code, so they can be searched for, documented and switched off one by one.
 */

/**
 * The codes of Tollgate's warnings, one a line: adding a code here is all the `warnings` option needs.
 * Each is explained in the core README under its code.
 */
export const WARNING_CODES = [
  /** `X-Forwarded-For` arrived but the app does not trust proxies: every client may share one bucket. */
  'TOLLGATE_UNTRUSTED_FORWARDED_FOR',
  /** The framework gave no client IP (e.g. a closed socket): the request was limited under `unknown`. */
  'TOLLGATE_MISSING_IP',
  /** The key function returned nothing: the request was limited by its client IP. */
  'TOLLGATE_MISSING_KEY',
  /** The store failed (an error other than its being unavailable); the request took the fallback. */
  'TOLLGATE_STORE_ERROR',
  /** The store became unavailable (down, silent, or failing): checks take the fallback until it recovers. */
  'TOLLGATE_STORE_UNAVAILABLE',
  /** The store answers again after it was unavailable. */
  'TOLLGATE_STORE_RECOVERED',
  /** The Redis client would queue checks while disconnected, or send them again after reconnecting. */
  'TOLLGATE_REDIS_CLIENT_QUEUES',
  /** Redis's `maxmemory-policy` may evict buckets that are still limiting someone. */
  'TOLLGATE_REDIS_EVICTION_POLICY',
] as const;

/** The code of one of Tollgate's warnings: one of {@link WARNING_CODES}. */
export type WarningCode = (typeof WARNING_CODES)[number];

/** Where warnings and errors go. `console` fits; so does a pino or Fastify logger. */
export interface Logger {
  warn(message: string): void;
  error(message: string): void;
}

/** `true`/`false` for all warnings, or per code. Default: all on. */
export type WarningSwitches = boolean | Partial<Record<WarningCode, boolean>>;

/** Store errors repeat while the store is down: one line per interval, with a count of the rest. */
const STORE_ERROR_INTERVAL_MS = 10_000;

/** What a store failure means for requests, by the limiter's `onStoreError`. */
const STORE_FAILURE_OUTCOMES = {
  insurance: 'requests are limited by the per-process insurance limiter',
  allow: 'requests pass unlimited',
  deny: 'requests fail',
} as const;

/** Reports each warning code once, and store errors at most once per interval. */
export class Warnings {
  readonly #logger: Logger;
  readonly #switches: WarningSwitches;
  readonly #reported = new Set<WarningCode>();
  #lastStoreErrorMs = Number.NEGATIVE_INFINITY;
  #suppressedStoreErrors = 0;

  constructor(logger: Logger, switches: WarningSwitches) {
    this.#logger = logger;
    this.#switches = switches;
  }

  /** Logs `message` under `code` the first time only. */
  once(code: Exclude<WarningCode, 'TOLLGATE_STORE_ERROR'>, message: string): void {
    if (this.#reported.has(code) || !this.#enabled(code)) return;
    this.#reported.add(code);
    this.#logger.warn(`[${code}] ${message}`);
  }

  /** Logs `message` under `code` each time: for events that are rare by nature, such as incidents. */
  event(code: WarningCode, level: keyof Logger, message: string): void {
    if (this.#enabled(code)) this.#logger[level](`[${code}] ${message}`);
  }

  /** Logs a store failure, throttled while failures repeat. */
  storeError(error: unknown, answer: 'insurance' | 'allow' | 'deny'): void {
    if (!this.#enabled('TOLLGATE_STORE_ERROR')) return;
    const nowMs = Date.now();
    if (nowMs - this.#lastStoreErrorMs < STORE_ERROR_INTERVAL_MS) {
      this.#suppressedStoreErrors++;
      return;
    }
    const suppressed = this.#suppressedStoreErrors
      ? ` (${this.#suppressedStoreErrors} more since the last report)`
      : '';
    this.#lastStoreErrorMs = nowMs;
    this.#suppressedStoreErrors = 0;
    const outcome = STORE_FAILURE_OUTCOMES[answer];
    const reason = error instanceof Error ? error.message : String(error);
    this.#logger.error(`[TOLLGATE_STORE_ERROR] rate-limit store failed, ${outcome}: ${reason}${suppressed}`);
  }

  #enabled(code: WarningCode): boolean {
    const switches = this.#switches;
    return typeof switches === 'boolean' ? switches : switches[code] !== false;
  }
}
