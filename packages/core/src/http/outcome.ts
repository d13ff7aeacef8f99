/** What an HTTP check tells an adapter to do. Decide here; adapters respond. */
import type { Decision } from '../decision.js';

/** What handlers and messages learn about a limited (or allowed) request. */
export interface RateLimitInfo {
  /** The limiter's name (its namespace in the store). */
  readonly limiter: string;
  /** The decision, with every policy's state. */
  readonly decision: Decision;
}

/** The answer to send when a request is limited. */
export interface RateLimitRejection {
  readonly status: 429;
  readonly contentType: string;
  readonly body: string;
}

/**
 * The outcome of a check:
 * - `skipped`: not limited (by `skip`, or a failed store with `failOpen`); send no headers.
 * - `allowed`: go on, after setting `headers`.
 * - `limited`: set `headers` (they include `Retry-After`) and answer 429 (the user's handler, else `rejection`).
 * - `error`: set `headers` and hand `error` to the framework's error handling: a `RateLimitError` when
 *   `throwOnLimit` is set, or the store's error when it failed and `failOpen` is false.
 */
export type RateLimitOutcome =
  | { readonly kind: 'skipped' }
  | { readonly kind: 'allowed'; readonly headers: Record<string, string>; readonly info: RateLimitInfo }
  | { readonly kind: 'limited'; readonly headers: Record<string, string>; readonly info: RateLimitInfo }
  | { readonly kind: 'error'; readonly headers: Record<string, string>; readonly error: unknown };
