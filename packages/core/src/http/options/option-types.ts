/** The options' types: what users and adapters give `createHttpLimiter`, before they are checked. */
import type { InsuranceOptions, LimiterOptions } from '../../limiter/limiter-options.js';
import type { Sleep } from '../../limiter/waits.js';
import type { AlgorithmName, Policy } from '../../model/policy.js';
import type { Store } from '../../model/store.js';
import type { Duration } from '../../support/duration.js';
import type { Logger, WarningSwitches } from '../../support/warnings.js';
import type { RateLimitCallback } from '../answer/callbacks.js';
import type { AllowedAnswerHeader, HeaderSwitches, LimitedAnswerHeader } from '../answer/header-switches.js';
import type { HeaderProfile } from '../answer/headers.js';
import type { RateLimitInfo } from '../answer/outcome.js';
import type { AllowList } from '../identity/allow-list.js';
import type { ClientIpSetting } from '../identity/client-ip-setting.js';
import type { KeyFunction } from '../identity/request-keys.js';

/**
 * What a request gets when the store fails: the insurance limiter's decision, a pass without limit, or
 * the store's error (see `onStoreError`).
 */
export type StoreFailureAnswer = 'insurance' | 'allow' | 'deny';

/** A value, or a function of the request that returns it (possibly async). */
export type PerRequest<Req, T> = T | ((request: Req) => T | Promise<T>);

/**
 * A cost known only once the response is done (the tokens an LLM answer used, a query's CPU time):
 * `reserve` is charged when the request arrives, all or none, as a plain `cost` is; once the response
 * has ended, `settle` says what the request really cost, and the difference is charged (possibly into
 * debt: the client then waits longer) or given back, in one atomic store step.
 *
 * @example
 * // An LLM token budget: 1,000 tokens reserved, the usage the handler wrote in a header settled.
 * const cost: MeteredCost<Request, Response> = {
 *   reserve: 1_000,
 *   settle: (req, res) => Number(res.getHeader('x-tokens-used')),
 * };
 */
export interface MeteredCost<Req, Res> {
  /** Tokens charged when the request arrives: a positive number, or a function of the request. */
  reserve: PerRequest<Req, number>;
  /**
   * The request's true cost, a finite number (0 or more), once its response has ended: completed,
   * streamed to its end, or aborted by the client (then with whatever the app has recorded so far). If
   * it throws, rejects or returns anything else, the request stays charged `reserve`.
   */
  settle: (request: Req, response: Res) => number | Promise<number>;
}

/**
 * The `delay` option: a request over the limit waits up to `maxWait` for its turn instead of a 429.
 *
 * @example
 * // 10 requests per second per client; a burst beyond it is spread out over up to 2 s, not refused.
 * const delay: DelayOptions = { maxWait: '2s' };
 */
export interface DelayOptions {
  /**
   * The longest a request waits for its turn: ms or a string such as `'2s'`, above 0 and at most
   * 2^31 − 1 ms. A request whose turn is further off is refused at once, as without `delay`.
   */
  maxWait: Duration;
  /**
   * The most requests that may wait at once, in this process (with `limit` as a function of the request:
   * per distinct limit). Past it, a request does not wait: it goes on if the tokens are there now, else
   * it is refused at once. Default: `1000`.
   */
  maxWaiters?: number;
  /**
   * How a request sleeps until its turn. Inject one in tests, beside the store's `clock`, so that no
   * real time passes. Default: a timer.
   */
  sleep?: Sleep;
}

/** What a 429 answer says instead of the default problem details: text, a JSON object, or a function. */
export type LimitedMessage<Req> =
  | string
  | Record<string, unknown>
  | ((
      request: Req,
      info: RateLimitInfo,
    ) => string | Record<string, unknown> | Promise<string | Record<string, unknown>>);

/**
 * Options shared by `@tollgate/express`, `@tollgate/fastify` and `@tollgate/koa`. Give `limit` + `window`
 * (+ `burst`), or `policies`; with neither, each client may send 100 requests per minute. `Req` is the
 * framework's request; `Res` what `requestWasSuccessful` is given besides it (Express `res`, Fastify
 * `reply`, Koa `ctx.response`).
 */
export interface RateLimitOptions<Req, Res = unknown>
  extends Pick<
    LimiterOptions,
    | 'store'
    | 'timeout'
    | 'insurance'
    | 'denyCache'
    | 'ban'
    | 'exponentialBackoff'
    | 'continueExceeding'
    | 'overrides'
  > {
  /**
   * Tokens per `window`; may be a function of the request for per-plan limits. `0` refuses every request
   * with a 429 (no `Retry-After`: no wait will do), without asking the store. Default: `100`.
   *
   * A function may return any number of distinct limits (per customer, from a database, say). A limiter
   * is kept in memory for each of the last 1,000 distinct limits used (2–3 KB each); one used less
   * recently is let go and built again when its limit comes back, finding its clients' buckets in the
   * store as they were. Only the insurance limiter's per-process counts of a limit let go start over.
   * `resetKey` reaches the buckets of the kept limits and of the last 10,000 let go.
   */
  limit?: PerRequest<Req, number>;
  /** The window: ms or `'15s'`, `'10 seconds'`, `'2 minutes'`, `'1h'`, … Default: `'1m'`. */
  window?: Duration;
  /** Bucket capacity when it should differ from `limit`. Default: `limit`. */
  burst?: number;
  /**
   * How `limit` per `window` is counted: `'token-bucket'` (default), `'fixed-window'` (at most `limit`
   * per window from a client's first request, as the peers count) or `'sliding-window'`.
   */
  algorithm?: AlgorithmName;
  /**
   * Marks a request as near the limit (`info.decision.nearLimit`, `onNearLimit`) once the tokens used,
   * its own included, reach this fraction of the capacity: with `limit: 10, nearLimit: 0.8`, requests 8,
   * 9 and 10 of a full bucket are near; a refused request never is. A fraction above 0 and at most 1.
   * With `policies`, give each policy its own. Default: none.
   */
  nearLimit?: number;
  /** Several policies, checked and charged together. Instead of `limit`/`window`/`burst`/`algorithm`. */
  policies?: Policy | readonly Policy[];
  /** Who is limited. Default: `byIp()`. See `byApiKey`, `byUser`, `firstOf`. */
  key?: KeyFunction<Req>;
  /**
   * This limiter's namespace in the store: limiters with the same name share buckets. Default: derived
   * from the policies (and, in Fastify, the route) and the order limiters are created in — stable
   * across processes running the same code. Set it to share on purpose, or to keep buckets across deploys
   * that add limiters.
   */
  name?: string;
  /**
   * Tokens a request costs: a number, a function of the request, or `{ reserve, settle }` for a cost
   * known only after the response (see {@link MeteredCost}). Default: `1`.
   */
  cost?: PerRequest<Req, number> | MeteredCost<Req, Res>;
  /** Requests for which this returns true are not limited and get no headers. */
  skip?: (request: Req) => boolean | Promise<boolean>;
  /**
   * Clients that are never charged and get no headers: client IPs (as the framework resolves them,
   * under its trusted-proxy setting) and identities (as the key function returns them, `'user:admin'`),
   * or a function of the request and its identity (sync or async).
   */
  allowList?: AllowList<Req>;
  /**
   * Count only the requests whose response failed: a successful one gets its tokens back once its
   * response has ended (to limit failed logins only, say). Default: `false`.
   */
  skipSuccessfulRequests?: boolean;
  /** Count only the requests whose response succeeded: a failed one gets its tokens back. Default: `false`. */
  skipFailedRequests?: boolean;
  /** Whether a response counts as a success, for the two options above. Default: status below 400. */
  requestWasSuccessful?: SuccessTest<Req, Res>;
  /** The standard header profile. Default: `'draft-11'` (see `HeaderProfile`). */
  headers?: HeaderProfile;
  /** Also send `X-RateLimit-Limit/-Remaining/-Reset` (reset as Unix epoch seconds). Default: `false`. */
  legacyHeaders?: boolean;
  /** Switch headers of limited answers off, one by one: `{ 'retry-after': false }`. Default: all on. */
  addHeaders?: HeaderSwitches<LimitedAnswerHeader>;
  /** Switch headers of allowed answers off, one by one: `{ 'ratelimit-policy': false }`. Default: all on. */
  addHeadersOnExceeding?: HeaderSwitches<AllowedAnswerHeader>;
  /** The status of a limited answer. A cost beyond capacity is answered 403 whatever it is. Default: `429`. */
  statusCode?: number;
  /** The 429 body instead of RFC 9457 problem details: a string (text/plain), an object (JSON), or a function. */
  message?: LimitedMessage<Req>;
  /**
   * An older spelling of `onStoreError`: `true` is `'allow'`, `false` is `'deny'`. Not with `onStoreError`.
   * Default: none (`onStoreError` decides).
   */
  failOpen?: boolean;
  /**
   * What a request gets when the store fails (down, silent past `timeout`, or erroring):
   * - `'insurance'` (default): the limiter's per-process insurance limiter decides, with headers and 429s
   *   as usual; an outage loosens the limit to per-process counting instead of removing it;
   * - `'allow'`: the request goes through, unlimited and without rate-limit headers;
   * - `'deny'`: the store's error goes to the framework's error handling (a 500 by default);
   * - a function of the error and the request returning one of these (sync or async).
   */
  onStoreError?:
    | StoreFailureAnswer
    | ((error: unknown, request: Req) => StoreFailureAnswer | Promise<StoreFailureAnswer>);
  /**
   * Hold a request over the limit until its turn, up to `delay.maxWait`, instead of answering 429: it
   * then goes on with the rate-limit headers of its turn. A request whose turn is further off is refused
   * at once. The store hands out turns in the order it saw the requests and at the limit's rate, across
   * every server that shares it. A client that hangs up while it waits is neither charged nor served.
   * Token buckets only; not with a metered `cost` or `dryRun`. See docs/waiting.md. Default: none.
   *
   * @example
   * app.use(rateLimit({ limit: 10, window: '1s', delay: { maxWait: '2s' } }));
   */
  delay?: false | DelayOptions;
  /** Where warnings and store errors are logged. Default: `console` (Fastify: the app's logger). */
  logger?: Logger;
  /** Switch warnings off, all (`false`) or by code (`{ TOLLGATE_MISSING_IP: false }`). Default: on. */
  warnings?: WarningSwitches;
  /**
   * Instead of answering 429 itself, hand a `RateLimitError` to the framework's error handling
   * (Express `next(err)`, Fastify `setErrorHandler`, Koa error middleware), headers already set. Default: `false`.
   */
  throwOnLimit?: boolean;
  /** The adapter's own 429 handler; its type is the framework's (see each adapter). Not with `throwOnLimit`. */
  handler?: unknown;
  /**
   * Shadow mode, for rolling a limiter out: every request is decided and charged exactly as when
   * enforcing, but goes on even when it would be refused (nor does a store failure fail it). Would-be
   * refusals are published as `'dry-run-limited'` on the `tollgate:decision` channel, passed to
   * `onExceeded`, and logged as `TOLLGATE_DRY_RUN_LIMITED` (at most one line per 10 s). `true`, or a
   * function of the request (sync or async). Default: `false`.
   */
  dryRun?: PerRequest<Req, boolean>;
  /**
   * In dry run, send the rate-limit headers as enforcing would (never `Retry-After`: the request is not
   * refused). Default: `false` (a dry run is invisible to clients).
   */
  dryRunHeaders?: boolean;
  /** Called for each request the limiter lets through (not awaited; if it throws, that is logged). */
  onExceeding?: RateLimitCallback<Req>;
  /** Called for each request the limiter refuses (not awaited; if it throws, that is logged). */
  onExceeded?: RateLimitCallback<Req>;
  /**
   * Called for each request let through near the limit (see `nearLimit`), after `onExceeding`: to warn
   * a customer before they are refused. Not awaited; if it throws, that is logged.
   */
  onNearLimit?: RateLimitCallback<Req>;
  /**
   * Where later code finds the request's `RateLimitInfo`: Express `req[name]`, Fastify `request[name]`,
   * Koa `ctx.state[name]`. Stacked limiters write in turn: the last one's stays. `false`: nowhere.
   * Default: `'rateLimit'`.
   */
  requestPropertyName?: string | false;
}

/** Says whether a response counts as a success. Default: status below 400. */
export type SuccessTest<Req, Res> = (request: Req, response: Res) => boolean | Promise<boolean>;

/** What an adapter tells the core about itself: its name for messages, and defaults it knows better. */
export interface AdapterSettings {
  /**
   * Starts every message: the adapter's package, and where the limiter is if that helps find it:
   * `'@tollgate/express'`, `'@tollgate/fastify (route GET /search)'`.
   */
  readonly adapter: string;
  /** Makes default names stable by where the limiter is used (Fastify: the route). */
  readonly nameSeed?: string;
  /**
   * What the adapter's users call the setting that decides the client IP, which the warnings about it
   * name (`TOLLGATE_UNTRUSTED_FORWARDED_FOR`, `TOLLGATE_PERMISSIVE_TRUST_PROXY`, `TOLLGATE_UNPARSED_IP`,
   * `TOLLGATE_MISSING_IP`): `{ name: "app.set('trust proxy', …)", trustExactly: … }`. Default: neutral
   * words, "the framework's trusted-proxy setting".
   */
  readonly clientIpSetting?: ClientIpSetting;
  /** The logger when none is given. Default: `console`. */
  readonly logger?: Logger;
  /**
   * `true` when the adapter sees the limiter being created while a request is being handled (inside a
   * middleware or a route handler): one created per request limits nothing, so that is warned about.
   */
  readonly inRequestHandler?: boolean;
  /**
   * The adapter's own name for the `handler` option, read as `handler` (`'onLimited'`); `handler` itself
   * is then no option. Default: `'handler'`.
   */
  readonly handlerName?: string;
  /**
   * Shared options this adapter has no use for, each with what to say when one is given (after the
   * adapter's name), which throws a `TypeError`:
   * `{ requestPropertyName: "there is no requestPropertyName option here; use the check's result" }`.
   */
  readonly notHere?: Readonly<Record<string, string>>;
}

/** Options of the adapters' `concurrencyLimit`. */
export interface ConcurrencyLimitOptions<Req> {
  /** The most requests of one client in progress at once. A positive whole number. */
  limit: number;
  /** Where leases live. Default: a `MemoryStore` of this limiter's own; share a `RedisStore` across servers. */
  store?: Store;
  /** Who is limited. Default: `byIp()`. */
  key?: KeyFunction<Req>;
  /** This limiter's namespace in the store. Default: `'concurrency'` and the limit, e.g. `'concurrency-2'`. */
  name?: string;
  /** How long a lease lives if its response never ends (a crashed process). Default: `'1m'`. */
  leaseTtl?: Duration;
  /** How long an acquire waits for a store that gives no answer. Default: `'1s'`. */
  timeout?: Duration | false;
  /** When the store fails: `'insurance'` (default), `'allow'` or `'deny'`, as for `rateLimit`. */
  onStoreError?: StoreFailureAnswer;
  /** The insurance limiter: `instances` divides the limit among that many app servers. */
  insurance?: InsuranceOptions;
  /** Requests for which this returns true are not limited. */
  skip?: (request: Req) => boolean | Promise<boolean>;
  /** The status of a refused request. Default: `429`. */
  statusCode?: number;
  /** Where lease failures are logged. Default: `console`. */
  logger?: Logger;
}
