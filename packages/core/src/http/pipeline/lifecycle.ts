/**
 * A request's way through a limiter, written once for every adapter: the charge, the request property,
 * the headers, the answer, and what happens after the response (a refund, a lease released). An adapter
 * implements {@link ResponseAccess} and calls `handle`; nothing of this sequence lives in an adapter.
 */

import { TollgateError } from '../../support/tollgate-error.js';
import { profileOnResponse, stackHeaders } from '../answer/header-stacking.js';
import type {
  ConcurrencyOutcome,
  NodeResponse,
  RateLimitInfo,
  RateLimitOutcome,
  RateLimitRejection,
} from '../answer/outcome.js';
import { clientGone, whenResponseEnds } from './response-end.js';

/**
 * How the core writes to a framework's response. Each adapter provides one, built once. Header methods
 * are called only while the head is not sent; `send` only for a response nobody answered yet.
 */
export interface ResponseAccess<Req, Res> {
  /** The Node.js response under `response`. */
  node(response: Res): NodeResponse;
  /**
   * Reads a header already set on the response, by the name as Tollgate writes it (`RateLimit-Policy`);
   * `undefined` or `''` when it is not set. A later limiter on the response reads the earlier one's
   * fields through it.
   */
  getHeader(response: Res, name: string): unknown;
  /** Sets every header of `headers` (their values are strings already). */
  setHeaders(response: Res, headers: Readonly<Record<string, string>>): void;
  removeHeader(response: Res, name: string): void;
  /**
   * Puts a checked request's info where the app reads it (`ctx.state.rateLimit`). Optional: by default
   * it is the request's own property (`req.rateLimit`).
   */
  expose?(request: Req, property: string, info: RateLimitInfo): void;
  /**
   * A signal that aborts when the client goes away, for a request that may wait for its turn (`delay`):
   * a Fetch `Request`'s `signal`, say; `undefined` when the runtime tells no such thing. Optional: by
   * default, the Node.js response's `'close'` before it ended.
   */
  hangUp?(request: Req, response: Res): AbortSignal | undefined;
  /**
   * Answers a refused request with `rejection`: its status, content type and body, as they are. `info`
   * is the refused request's, when a rate limiter (not a concurrency limiter) refused it.
   */
  send(response: Res, rejection: RateLimitRejection, info?: RateLimitInfo): unknown;
}

/**
 * What an adapter does after `handle`:
 * - `next`: go on to the next middleware or the route's handler;
 * - `answered`: stop; the refusal was sent;
 * - `stopped`: stop; nobody is left to answer (the client went away), or something before the limiter
 *   already sent the head of another answer, so neither a refusal nor the route's handler may follow;
 * - `handler`: stop and let the adapter's own `handler` option answer, with the request's info;
 * - `error`: hand `error` to the framework's error handling.
 */
export type Handled =
  | { readonly kind: 'next' }
  | { readonly kind: 'answered' }
  | { readonly kind: 'stopped' }
  | { readonly kind: 'handler'; readonly info: RateLimitInfo }
  | { readonly kind: 'error'; readonly error: unknown };

/** The answers without data: one frozen object each, so the common path allocates nothing. */
const NEXT: Handled = Object.freeze({ kind: 'next' });
const ANSWERED: Handled = Object.freeze({ kind: 'answered' });
const STOPPED: Handled = Object.freeze({ kind: 'stopped' });

/** What {@link rateLimitLifecycle} needs of an HTTP limiter: its decision, its answer, its refunds. */
export interface CheckingLimiter<Req, Res> {
  readonly requestPropertyName: string | undefined;
  /** The adapter's own `handler` option: when set, a refusal is left to it. */
  readonly handler: unknown;
  /** Whether a check may hold a request for its turn (`delay`): it is then given a hang-up signal. */
  readonly waits?: boolean;
  check(request: Req, signal?: AbortSignal): Promise<RateLimitOutcome>;
  rejection(request: Req, info: RateLimitInfo): Promise<RateLimitRejection>;
  countByResponse(info: RateLimitInfo, request: Req, response: Res, raw: NodeResponse): void;
}

/**
 * A rate limiter's whole request lifecycle, built once per limiter. The returned function never throws
 * and never rejects: whatever fails comes back as `error`, for the framework's error handling.
 * - A client that went away before the check is neither charged nor served; one that went away during
 *   it stays charged (hanging up must not erase a charge) and is not served either, except while it
 *   waits for its turn (`delay`): that turn is given back.
 * - Headers and the refusal are written only while the head is not sent (a timeout middleware may have
 *   answered already); a refused request whose head is out is not served.
 * - With the adapter's own `handler` option, a refusal is left to it.
 *
 * @example
 * const handle = rateLimitLifecycle(limiter, expressResponses);
 * const handled = await handle(req, res); // { kind: 'next' }, 'answered', 'handler' or 'error'
 */
export function rateLimitLifecycle<Req, Res>(
  limiter: CheckingLimiter<Req, Res>,
  access: ResponseAccess<Req, Res>,
): (request: Req, response: Res) => Promise<Handled> {
  const property = limiter.requestPropertyName;
  const hasHandler = limiter.handler !== undefined;
  const expose = access.expose?.bind(access) ?? exposeOnRequest;
  const getHeader = access.getHeader.bind(access);
  const hangUp: ((request: Req, response: Res, raw: NodeResponse) => AbortSignal | undefined) | undefined =
    limiter.waits !== true
      ? undefined
      : access.hangUp === undefined
        ? (_request, _response, raw) => closeSignal(raw)
        : (request, response) => access.hangUp?.(request, response);

  /**
   * Sets the outcome's headers. A later limiter on the same response (a route's, after the app-wide
   * one) finds the earlier one's fields on it, and keeps the fields of one profile.
   */
  function writeHeaders(outcome: HeadersOutcome, response: Res): void {
    const earlier = profileOnResponse(response, getHeader);
    if (earlier === undefined) {
      access.setHeaders(response, outcome.headers);
      return;
    }
    const stacked = stackHeaders(outcome, { profile: earlier, get: (name) => getHeader(response, name) });
    for (const name of stacked.remove) access.removeHeader(response, name);
    access.setHeaders(response, stacked.set);
  }

  async function refuse(request: Req, response: Res, info: RateLimitInfo): Promise<Handled> {
    if (hasHandler) return { kind: 'handler', info };
    await access.send(response, await limiter.rejection(request, info), info);
    return ANSWERED;
  }

  return async function handle(request, response) {
    const raw = access.node(response);
    let signal: AbortSignal | undefined;
    try {
      if (clientGone(raw)) return STOPPED;
      signal = hangUp?.(request, response, raw);
      const outcome = await limiter.check(request, signal);
      if (outcome.kind === 'skipped') return NEXT;
      if (property !== undefined && outcome.info !== undefined) expose(request, property, outcome.info);
      if (clientGone(raw) || signal?.aborted === true) return STOPPED;
      const headSent = raw.headersSent === true;
      if (!headSent) writeHeaders(outcome, response);
      if (outcome.kind === 'allowed') {
        limiter.countByResponse(outcome.info, request, response, raw);
        return NEXT;
      }
      if (outcome.kind === 'error') return { kind: 'error', error: outcome.error };
      return headSent ? STOPPED : await refuse(request, response, outcome.info);
    } catch (error) {
      // A client that left while its key was read (its address went with it), or while it waited for its
      // turn, is answered to nobody.
      return clientGone(raw) || signal?.aborted === true ? STOPPED : { kind: 'error', error };
    }
  };
}

/**
 * A signal that aborts once the Node.js response closes before it ended: the client went away. Built
 * only for a limiter that may hold a request, after `clientGone` said the client is still there.
 */
function closeSignal(raw: NodeResponse): AbortSignal {
  const controller = new AbortController();
  raw.once('close', () => {
    if (!raw.writableEnded) controller.abort();
  });
  return controller.signal;
}

/**
 * What an adapter whose middleware must return an answer (a Web `Response`) throws when the lifecycle
 * neither let the request through nor answered it: `error`'s error, for the app's error handling, or,
 * when `stopped`, an error saying so (the head was sent already, or the client went away).
 *
 * @example
 * if (handled.kind === 'error' || handled.kind === 'stopped') throw handledError(handled, '@tollgate/hono');
 */
export function handledError(handled: Handled, adapter: string): unknown {
  return handled.kind === 'error'
    ? handled.error
    : new TollgateError('TOLLGATE_ALREADY_ANSWERED', `${adapter}: this request was answered already`);
}

/** Where a request's info goes unless the adapter says otherwise: on the request, as its own property. */
function exposeOnRequest(request: unknown, property: string, info: RateLimitInfo): void {
  (request as Record<string, unknown>)[property] = info;
}

/** An outcome that carries headers. */
type HeadersOutcome = Exclude<RateLimitOutcome, { kind: 'skipped' }>;

/** What {@link concurrencyLifecycle} needs of an HTTP concurrency limiter. */
export interface LeasingLimiter<Req> {
  check(request: Req): Promise<ConcurrencyOutcome>;
}

/**
 * A concurrency limiter's whole request lifecycle, built once per limiter; never throws. A lease is
 * released when the response is over — completed, aborted, or closed before the lease came back from
 * the store, in which case at once: no lease outlives its request.
 *
 * @example
 * const handle = concurrencyLifecycle(limiter, koaResponses);
 * const handled = await handle(ctx, ctx);
 */
export function concurrencyLifecycle<Req, Res>(
  limiter: LeasingLimiter<Req>,
  access: ResponseAccess<Req, Res>,
): (request: Req, response: Res) => Promise<Handled> {
  return async function handle(request, response) {
    const raw = access.node(response);
    try {
      if (clientGone(raw)) return STOPPED;
      const outcome = await limiter.check(request);
      if (outcome.kind === 'skipped') return NEXT;
      if (outcome.kind === 'error') return { kind: 'error', error: outcome.error };
      if (outcome.kind === 'acquired') {
        whenResponseEnds(raw, outcome.release);
        return clientGone(raw) ? STOPPED : NEXT;
      }
      if (raw.headersSent === true || clientGone(raw)) return STOPPED;
      await access.send(response, outcome);
      return ANSWERED;
    } catch (error) {
      return clientGone(raw) ? STOPPED : { kind: 'error', error };
    }
  };
}
