/**
 * Setups that are valid but probably wrong, reported once each through an injectable logger with a stable
 * code, so they can be searched for, documented and switched off one by one.
 */

/**
 * The codes of Tollgate's warnings, one a line: adding a code here is all the `warnings` option needs.
 * Each is explained in docs/errors.md under its code.
 */
export const WARNING_CODES = [
  /** `X-Forwarded-For` arrived but the app does not trust proxies: every client may share one bucket. */
  'TOLLGATE_UNTRUSTED_FORWARDED_FOR',
  /** Neither the key function nor the framework gave a client identity: the request failed with a `ClientAddressError`. */
  'TOLLGATE_MISSING_IP',
  /** The client address was not an IP (a proxy forwarding something else): it was limited on its own, by its hash. */
  'TOLLGATE_UNPARSED_IP',
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
  /** A refund after a response (`skipSuccessfulRequests`, `skipFailedRequests`) failed: the request stays counted. */
  'TOLLGATE_REFUND_FAILED',
  /** `onExceeding`, `onExceeded` or `requestWasSuccessful` threw or rejected; the request went on regardless. */
  'TOLLGATE_CALLBACK_FAILED',
  /** The framework trusts every proxy (Express `trust proxy` true, …): any client can choose its IP. */
  'TOLLGATE_PERMISSIVE_TRUST_PROXY',
  /** One request was checked twice by the same limiter (mounted twice): it was charged twice. */
  'TOLLGATE_DOUBLE_COUNT',
  /** The key function returned a whole IPv6 address: one client can rotate through its subnet's addresses. */
  'TOLLGATE_UNGROUPED_IPV6_KEY',
  /** A limiter was created while a request was being handled: one per request limits nothing. */
  'TOLLGATE_CREATED_IN_HANDLER',
  /** A limiter in dry run would have refused requests, and let them through. */
  'TOLLGATE_DRY_RUN_LIMITED',
  /** Fastify: a route was added before the plugin had loaded; a hook of the app limits it instead. */
  'TOLLGATE_ROUTE_NOT_SEEN',
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

/** Failures repeat while their cause lasts (a store down, a buggy callback): one line per interval each. */
const REPEATED_FAILURE_INTERVAL_MS = 10_000;

/** Codes logged each time they happen, throttled: failures, not setups. */
type FailureCode = 'TOLLGATE_STORE_ERROR' | 'TOLLGATE_REFUND_FAILED' | 'TOLLGATE_CALLBACK_FAILED';

/** Codes logged as they happen, throttled: failures, and what a dry run would have refused. */
type ThrottledCode = FailureCode | 'TOLLGATE_DRY_RUN_LIMITED';

/**
 * Warnings reported once per process rather than once per limiter, by code and subject: when limiters
 * themselves are the problem, each new one would otherwise say it again.
 */
const reportedInProcess = new Set<string>();

/** When a failure code was last logged, and how many since were held back. */
interface Throttle {
  lastMs: number;
  suppressed: number;
}

/** What a store failure means for requests, by the limiter's `onStoreError`. */
const STORE_FAILURE_OUTCOMES = {
  insurance: 'requests are limited by the per-process insurance limiter',
  allow: 'requests pass unlimited',
  deny: 'requests fail',
} as const;

/** Reports each warning code once, and failures (store errors, refunds, callbacks) at most once per interval. */
export class Warnings {
  readonly #logger: Logger;
  readonly #switches: WarningSwitches;
  readonly #reported = new Set<WarningCode>();
  readonly #throttles = new Map<ThrottledCode, Throttle>();

  constructor(logger: Logger, switches: WarningSwitches) {
    this.#logger = logger;
    this.#switches = switches;
  }

  /** Logs `message` under `code` the first time only. */
  once(code: Exclude<WarningCode, ThrottledCode>, message: string): void {
    if (this.#reported.has(code) || !this.#enabled(code)) return;
    this.#reported.add(code);
    this.#logger.warn(`[${code}] ${message}`);
  }

  /**
   * Logs `message` under `code` the first time in this process for `subject` (such as a limiter's
   * options), whichever limiter reports it.
   */
  oncePerProcess(code: Exclude<WarningCode, ThrottledCode>, subject: string, message: string): void {
    const reported = `${code} ${subject}`;
    if (reportedInProcess.has(reported) || !this.#enabled(code)) return;
    reportedInProcess.add(reported);
    this.#logger.warn(`[${code}] ${message}`);
  }

  /** Whether `code` would still be logged by {@link once}: checks that find nothing more to say can stop. */
  due(code: Exclude<WarningCode, ThrottledCode>): boolean {
    return !this.#reported.has(code) && this.#enabled(code);
  }

  /** Logs a failure with `logger.error`, at most once per interval per code, counting the ones held back. */
  failure(code: FailureCode, message: string): void {
    this.throttled(code, 'error', message);
  }

  /** Logs `message` under `code` at `level`, at most once per interval per code, counting the ones held back. */
  throttled(code: ThrottledCode, level: keyof Logger, message: string): void {
    if (!this.#enabled(code)) return;
    const nowMs = Date.now();
    const throttle = this.#throttles.get(code) ?? { lastMs: Number.NEGATIVE_INFINITY, suppressed: 0 };
    this.#throttles.set(code, throttle);
    if (nowMs - throttle.lastMs < REPEATED_FAILURE_INTERVAL_MS) {
      throttle.suppressed++;
      return;
    }
    const suppressed = throttle.suppressed ? ` (${throttle.suppressed} more since the last report)` : '';
    throttle.lastMs = nowMs;
    throttle.suppressed = 0;
    this.#logger[level](`[${code}] ${message}${suppressed}`);
  }

  /** Logs `message` under `code` each time: for events that are rare by nature, such as incidents. */
  event(code: WarningCode, level: keyof Logger, message: string): void {
    if (this.#enabled(code)) this.#logger[level](`[${code}] ${message}`);
  }

  /** Logs a store failure, throttled while failures repeat. */
  storeError(error: unknown, answer: 'insurance' | 'allow' | 'deny'): void {
    const outcome = STORE_FAILURE_OUTCOMES[answer];
    this.failure('TOLLGATE_STORE_ERROR', `rate-limit store failed, ${outcome}: ${reasonOf(error)}`);
  }

  #enabled(code: WarningCode): boolean {
    const switches = this.#switches;
    return typeof switches === 'boolean' ? switches : switches[code] !== false;
  }
}

/** An error's message, for a log line. */
export function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
