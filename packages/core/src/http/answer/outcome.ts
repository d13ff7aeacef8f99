/** What an HTTP check tells an adapter to do. Decide here; adapters respond. */
import type { Decision } from '../../model/decision.js';
import type { HeaderProfile } from './headers.js';

/**
 * What handlers, messages, callbacks and later code (`req.rateLimit`, `request.rateLimit`,
 * `ctx.state.rateLimit`) learn about a request's rate limit. The numbers are those of the policy that
 * decided (`decision.decidedBy`); `decision` has every policy's.
 */
export interface RateLimitInfo {
  /** The limiter's name (its namespace in the store). */
  readonly limiter: string;
  /**
   * The decision, with every policy's state. For a request that waited for its turn (`delay`), as it
   * stood at its turn: `decidedAtMs` is the turn, and `waitedMs` how long the request waited for it.
   */
  readonly decision: Decision;
  /** The identity the request was charged to, as the key function gave it: `'ip:203.0.113.7'`, `'user:42'`. */
  readonly key: string;
  /**
   * `true` when the limiter checked the request in dry run: it goes on whatever `decision.allowed` says
   * (`false` there means it would have been refused).
   */
  readonly dryRun: boolean;
  /** Tokens per window of the deciding policy. */
  readonly limit: number;
  /** Whole tokens left in the deciding policy's bucket. */
  readonly remaining: number;
  /** Tokens missing from the deciding policy's bucket: its capacity minus `remaining`. */
  readonly used: number;
  /** Milliseconds until the deciding policy's bucket is full again. */
  readonly resetMs: number;
  /** When the deciding policy's bucket is full again, by the store's clock. */
  readonly resetTime: Date;
  /**
   * Refills every bucket of this request's `key` in this limiter (an unblock after a password reset,
   * say). Rejects when the store fails.
   */
  resetKey(): Promise<void>;
}

/** The answer to send when a request is limited: `statusCode` (429), or 403 when its cost exceeds a capacity. */
export interface RateLimitRejection {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
  /** `body` as UTF-8 bytes, made once for an answer that many requests get. */
  readonly bytes: Buffer;
}

/**
 * The outcome of a check:
 * - `skipped`: not limited (by `skip`, `allowList`, or a failed store with `onStoreError: 'allow'`); send no headers.
 * - `allowed`: go on, after setting `headers` (in dry run also when the decision refused it:
 *   `info.decision.allowed` is then `false`).
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
      /** With `throwOnLimit`: the refused request's info, also on the `RateLimitError`. */
      readonly info?: RateLimitInfo;
    };

/** What a concurrency limiter's check tells the lifecycle to do with a request. */
export type ConcurrencyOutcome =
  | { readonly kind: 'skipped' }
  /**
   * Go on; call `release` once the response is done or aborted. It never rejects: it resolves once the
   * store has the slot back, or the failure was logged.
   */
  | { readonly kind: 'acquired'; readonly release: () => Promise<void> }
  /** Answer `status` with `body` (problem details); `bytes` is `body` as UTF-8, made once per limiter. */
  | ({ readonly kind: 'limited' } & RateLimitRejection)
  /** Hand `error` to the framework (`onStoreError: 'deny'`). */
  | { readonly kind: 'error'; readonly error: unknown };

/**
 * The Node.js response under a framework's own (Express `res`, Fastify `reply.raw`, Koa `ctx.res`): how
 * the core learns that a response has ended, and how.
 */
export interface NodeResponse {
  once(event: 'close', listener: () => void): unknown;
  /** `true` once the app has finished the response (`end()`); still `false` when the client went away first. */
  readonly writableEnded: boolean;
  readonly statusCode: number;
  /** `true` once the status line and headers were sent: nothing may be written to them after. */
  readonly headersSent?: boolean;
  /** `true` once `'close'` was emitted. */
  readonly closed?: boolean;
  /** `true` once the response or its socket was destroyed: the client went away, or the server cut it. */
  readonly destroyed?: boolean;
}
