/**
 * Failures the limit logs instead of throwing into a request (a settle or a check the store failed):
 * one line per code at most every 10 seconds, with how many were not printed, so an outage does not
 * flood the log.
 */
import type { Logger } from '@tollgate/core';

/** The codes logged: a settle that could not reach the store, a check whose store failed. */
export type FailureCode = 'TOLLGATE_REFUND_FAILED' | 'TOLLGATE_STORE_ERROR';

const INTERVAL_MS = 10_000;

/**
 * Logs failures through `logger.error`, throttled per code.
 *
 * @example
 * const failures = new FailureLog(console);
 * failures.report('TOLLGATE_REFUND_FAILED', 'could not settle an operation’s cost', error);
 */
export class FailureLog {
  readonly #logger: Logger;
  readonly #last = new Map<FailureCode, { atMs: number; unreported: number }>();

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  report(code: FailureCode, what: string, error: unknown): void {
    const nowMs = Date.now();
    const last = this.#last.get(code);
    if (last !== undefined && nowMs - last.atMs < INTERVAL_MS) {
      last.unreported++;
      return;
    }
    const more =
      last !== undefined && last.unreported > 0 ? ` (${last.unreported} more since the last report)` : '';
    this.#last.set(code, { atMs: nowMs, unreported: 0 });
    const reason = error instanceof Error ? error.message : String(error);
    this.#logger.error(`[${code}] @tollgate/graphql: ${what}: ${reason}${more}`);
  }
}
