/** What an HTTP check tells an adapter to do. Decide here; adapters respond. */
import type { Decision } from '../decision.js';
import type { HeaderProfile } from './headers.js';

/** What handlers and messages learn about a limited (or allowed) request. */
export interface RateLimitInfo {
  /** The limiter's name (its namespace in the store). */
  readonly limiter: string;
  /** The decision, with every policy's state. */
  readonly decision: Decision;
}

/** The answer to send when a request is limited: 429, or 403 when its cost exceeds a capacity. */
export interface RateLimitRejection {
  readonly status: 429 | 403;
  readonly contentType: string;
  readonly body: string;
}

/**
 * The outcome of a check:
 * - `skipped`: not limited (by `skip`, or a failed store with `failOpen`); send no headers.
 * - `allowed`: go on, after setting `headers`.
 * - `limited`: set `headers` (they include `Retry-After` when a wait will do) and answer (the user's
 *   handler, else `rejection`): 429, or 403 when the cost exceeds a capacity.
 * - `error`: set `headers` and hand `error` to the framework's error handling: a `RateLimitError` when
 *   `throwOnLimit` is set, or the store's error when it failed and `failOpen` is false.
 * `profile` is the header profile that wrote `headers`, for `stackHeaders`; absent when they hold no
 * standard fields.
 */
export type RateLimitOutcome =
  | { readonly kind: 'skipped' }
  | {
      readonly kind: 'allowed';
      readonly headers: Record<string, string>;
      readonly profile: HeaderProfile;
      readonly info: RateLimitInfo;
    }
  | {
      readonly kind: 'limited';
      readonly headers: Record<string, string>;
      readonly profile: HeaderProfile;
      readonly info: RateLimitInfo;
    }
  | {
      readonly kind: 'error';
      readonly headers: Record<string, string>;
      readonly profile?: HeaderProfile;
      readonly error: unknown;
    };
