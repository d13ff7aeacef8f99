/**
 * One request's answer in the making, for the core's lifecycle, in the Fetch API's terms: the headers its
 * limiters wrote, the refusal, and the end of the `Response` finally sent, which a refund or a lease
 * release waits for. For adapters whose framework answers with a Web `Response` (`@tollgate/fetch`,
 * `@tollgate/hono`).
 */
import type { NodeResponse, RateLimitInfo, RateLimitRejection } from '../answer/outcome.js';
import type { RateLimitOptions } from '../options/option-types.js';
import type { ResponseAccess } from './lifecycle.js';
import { whenResponseEnds } from './response-end.js';

/**
 * The answer in the making of each request (a `Request`, a Hono `Context`): one for all its limiters. A
 * symbol on the request rather than a WeakMap entry per request, which the garbage collector traces apart.
 */
const ANSWER = Symbol('tollgate.answer');
type Answered = { [ANSWER]?: WebAnswer };

/**
 * What a runtime gives a request to keep it alive for work after its response: Cloudflare Workers' `ctx`,
 * Next.js middleware's `event`. Where a request's I/O ends with it (Workers), a refund or a lease release
 * sent after the response is cut off unless the runtime is told to wait for it.
 *
 * @example
 * export default { fetch: (request, env, ctx) => { WebAnswer.for(request, request.method, env, ctx); … } };
 */
export interface WaitUntilContext {
  waitUntil(work: Promise<unknown>): void;
}

/**
 * A request's answer, shaped as the core's `NodeResponse`, since the core learns from that how a
 * response ended: `'close'` once it was sent (`writableEnded`) or not, the client gone. Where the
 * runtime answers through a Node.js response (@hono/node-server), that response's own `'close'` ends
 * the answer. Elsewhere the runtime tells nothing, and the body is watched instead: the answer ends
 * when it was read to its end or cancelled, which is the runtime sending it unless a middleware outside
 * the limiter reads it first (Hono's `etag()` hashes a clone), so such middleware goes after the limiter.
 * For adapters built on Web `Response`s; apps do not need it.
 *
 * @example
 * const answer = WebAnswer.for(request, request.method, env); // env: the handler's second argument
 * const handled = await rateLimitLifecycle(limiter, WebAnswer.access(expose))(request, answer);
 * if (handled.kind === 'next') return answer.finish(await handler(request));
 */
export class WebAnswer implements NodeResponse {
  /** The rate-limit headers of every limiter that checked the request, stacked as the core does. */
  readonly headers: Record<string, string> = {};
  /** The info of the last limiter that checked the request; `undefined` when it skipped it. */
  info: RateLimitInfo | undefined;
  /** The refusal to send, once a limiter refused the request. */
  rejection: RateLimitRejection | undefined;
  /** The `Response` sent, once {@link finish} saw it: what `requestWasSuccessful` is given. */
  response: Response | undefined;
  statusCode = 200;
  writableEnded = false;
  closed = false;
  /** A HEAD answer sends no body, and runtimes drop it unread (Hono does): it ends once it is sent. */
  readonly #head: boolean;
  /** The Node.js response the runtime sends the answer through, when it gives one: its end is the answer's. */
  readonly #outgoing: NodeResponse | undefined;
  /** Told of the work the answer's end starts, where the runtime would cut it off with the request. */
  readonly #context: WaitUntilContext | undefined;
  /** What the answer's end starts (a refund, a lease release), each returning its work. */
  #listeners: (() => unknown)[] = [];
  /** Whether the answer's end is watched already: the Node.js response's, or else its body's. */
  #watched = false;

  private constructor(
    method: string,
    outgoing: NodeResponse | undefined,
    context: WaitUntilContext | undefined,
  ) {
    this.#head = method === 'HEAD';
    this.#outgoing = outgoing;
    this.#context = context;
  }

  /**
   * The answer of `request` (or of a framework's context): the same for every limiter of the request.
   * `bindings` is what the runtime gave the handler beside the request (Hono's `c.env`): when it holds
   * the Node.js response (@hono/node-server's `{ incoming, outgoing }`), the answer ends with it.
   * `context`, when the runtime gives one (Workers' `ctx`), is handed the work the answer's end starts.
   */
  static for(
    request: object,
    method = (request as Request).method,
    bindings?: unknown,
    context?: WaitUntilContext,
  ): WebAnswer {
    const known = (request as Answered)[ANSWER];
    if (known !== undefined && !known.closed) return known;
    const answer = new WebAnswer(method, outgoingOf(bindings), waitUntilOf(context));
    (request as Answered)[ANSWER] = answer;
    return answer;
  }

  /**
   * How the core's lifecycle writes to answers; `expose` puts a request's info where the app reads it.
   * `hangUp` gives the signal that aborts when the client goes away, for a limiter with `delay`: by
   * default the request's own `signal` when the request is a Fetch `Request` (a framework's context,
   * such as Hono's, says where its `Request` is).
   */
  static access<Req>(
    expose: NonNullable<ResponseAccess<Req, WebAnswer>['expose']>,
    hangUp: (request: Req) => AbortSignal | undefined = signalOfRequest,
  ): ResponseAccess<Req, WebAnswer> {
    return {
      node: (answer) => answer,
      hangUp,
      getHeader: (answer, name) => answer.headers[name],
      setHeaders: (answer, headers) => void Object.assign(answer.headers, headers),
      removeHeader: (answer, name) => void delete answer.headers[name],
      expose,
      send(answer, rejection) {
        answer.rejection = rejection;
      },
    };
  }

  /**
   * The options as the core takes them: what it gives `requestWasSuccessful` and a metered cost's
   * `settle` as the response is this answer, so they are given the `Response` it sent instead. Anything
   * else, a mistake included, is passed on as it is, for the core to check.
   */
  static options<Req>(options: RateLimitOptions<Req, Response>): RateLimitOptions<Req, WebAnswer> {
    const { requestWasSuccessful: successful, cost, ...rest } = options;
    const sent = (answer: WebAnswer) => answer.response as Response;
    const mapped: RateLimitOptions<Req, WebAnswer> = rest;
    type Mapped = Required<RateLimitOptions<Req, WebAnswer>>;
    if (successful !== undefined) {
      mapped.requestWasSuccessful =
        typeof successful === 'function'
          ? (request, answer) => successful(request, sent(answer))
          : successful;
    }
    if (typeof cost === 'object' && cost !== null && typeof cost.settle === 'function') {
      const { settle } = cost;
      mapped.cost = { ...cost, settle: (request, answer) => settle(request, sent(answer)) };
    } else if (cost !== undefined) mapped.cost = cost as Mapped['cost'];
    return mapped;
  }

  /** A limiter starts checking the request: the info is the next one's. */
  checking(): this {
    this.info = undefined;
    return this;
  }

  /** `listener` runs once the answer ends; a promise it returns is work the runtime must wait for. */
  once(_event: 'close', listener: () => unknown): void {
    this.#listeners.push(listener);
    const outgoing = this.#outgoing;
    if (outgoing === undefined || this.#watched) return;
    this.#watched = true;
    // Sent means the Node.js response ended, whoever read the body: a middleware that reads a clone of
    // it (to hash it) reaches its end long before the client has it. A response that closed before the
    // answer was finished, or before it ended (the client went away), was not sent.
    whenResponseEnds(outgoing, () => this.end(this.response !== undefined && outgoing.writableEnded));
  }

  /**
   * Ends the answer, once: `completed` when it was sent to the end, not when cancelled or failed. The
   * work its listeners start goes to the runtime's `waitUntil`, when it gave one.
   */
  end(completed: boolean): void {
    if (this.closed) return;
    this.writableEnded = completed;
    this.closed = true;
    const listeners = this.#listeners.splice(0);
    if (this.#context === undefined || listeners.length === 0) {
      for (const listener of listeners) listener();
      return;
    }
    this.#context.waitUntil(Promise.allSettled(listeners.map((listener) => listener())));
  }

  /** The handler threw: the runtime answers 500, and the request is judged as such (as Express does). */
  fail(): void {
    this.statusCode = 500;
    this.response ??= new Response(null, { status: 500 });
    this.end(true);
  }

  /**
   * `response` with the rate-limit headers, in a copy when its headers are immutable (a `fetch()`
   * answer). When a refund or a lease waits for its end and no Node.js response tells it, its body is
   * watched, in a copy of the `Response`: the answer ends when the body was read to the end, or
   * cancelled. Without a body, now.
   */
  finish(response: Response): Response {
    return this.#finish(response, false);
  }

  /** {@link finish}; `headed`: `response` already carries the rate-limit headers (a refusal made here). */
  #finish(response: Response, headed: boolean): Response {
    if (response === this.response) return response;
    this.statusCode = response.status;
    const watch = !this.#watched && this.#listeners.length > 0;
    this.#watched ||= watch;
    // `body` is read only when something waits for its end: reading it makes a runtime's lightweight
    // Response (@hono/node-server's) build a full one, and leave its fast way of sending.
    const bodyless = watch && (response.body === null || this.#head);
    const sent =
      watch && !bodyless ? new Response(watched(response.body as ReadableStream, this), response) : response;
    this.response = headed && sent === response ? response : withHeaders(sent, this.headers);
    if (bodyless) this.end(true);
    return this.response;
  }

  /**
   * The refusal a limiter chose, with the rate-limit headers (`Retry-After` included), made by `respond`
   * (a framework's own, such as Hono's `c.body`, keeps what earlier middleware set). No body for HEAD.
   */
  refusal(respond: (body: string | null, init: ResponseInit) => Response = newResponse): Response {
    const { status, contentType, body, bytes } = this.rejection as RateLimitRejection;
    // Without a prototype: a framework may read the record with `for…in` (Hono's `c.body` does), which
    // would also send what a polluted Object.prototype holds.
    const headers: Record<string, string> = Object.assign(Object.create(null), this.headers, {
      'Content-Type': contentType,
      'Content-Length': String(bytes.length),
    });
    return this.#finish(respond(this.#head ? null : body, { status, headers }), true);
  }
}

const newResponse = (body: string | null, init: ResponseInit): Response => new Response(body, init);

/** A Fetch `Request`'s signal, which aborts when its client goes away; nothing for anything else. */
const signalOfRequest = (request: unknown): AbortSignal | undefined =>
  request instanceof Request ? request.signal : undefined;

/**
 * The Node.js response in a runtime's `bindings`, if there is one: @hono/node-server passes
 * `{ incoming, outgoing }`. Only an own `outgoing` that behaves as one counts: other runtimes pass other
 * things there (Deno its `info`, Bun its server, Workers the app's own bindings), and a polluted
 * Object.prototype must not make one up.
 */
function outgoingOf(bindings: unknown): NodeResponse | undefined {
  if (typeof bindings !== 'object' || bindings === null || !Object.hasOwn(bindings, 'outgoing')) return;
  const outgoing = (bindings as { outgoing: Partial<NodeResponse> | null }).outgoing;
  const behaves = typeof outgoing?.once === 'function' && typeof outgoing.writableEnded === 'boolean';
  return behaves ? (outgoing as NodeResponse) : undefined;
}

/** `context` when it has a `waitUntil` to call, else `undefined`. */
function waitUntilOf(context: WaitUntilContext | undefined): WaitUntilContext | undefined {
  return typeof context?.waitUntil === 'function' ? context : undefined;
}

/** Sets `headers` on `response`, or on a copy of it when its headers are immutable. */
function withHeaders(response: Response, headers: Readonly<Record<string, string>>): Response {
  try {
    for (const name of Object.keys(headers)) response.headers.set(name, headers[name] as string);
    return response;
  } catch {
    return withHeaders(new Response(response.body, response), headers);
  }
}

/**
 * `body`, passed through chunk by chunk as it is read, ending `answer` when the reader reaches its end
 * (completed) or cancels it, or the body fails (not). A TransformStream would be shorter, but Node 20's
 * does not tell a cancel apart. No read ahead (`highWaterMark: 0`): the end is the reader's.
 */
function watched(body: ReadableStream<Uint8Array>, answer: WebAnswer): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (error) {
          answer.end(false);
          throw error;
        }
        if (!chunk.done) return controller.enqueue(chunk.value);
        answer.end(true);
        controller.close();
      },
      cancel(reason) {
        answer.end(false);
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
