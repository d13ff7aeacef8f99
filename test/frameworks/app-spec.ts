/**
 * A framework-neutral description of an app under test, so one scenario table drives Express, Fastify
 * and Koa alike. Each driver builds the described app the way that framework's users would.
 */
import type { RateLimitOptions, Store } from '@tollgate/core';

/** Reads a native request of any of the frameworks: what scenario options need from requests. */
export interface RequestReader {
  header(request: never, name: string): string | undefined;
  /** The user an auth step put on the request (from the `x-user` header), if any. */
  userId(request: never): string | undefined;
}

/** Limiter options; the runner adds the scenario's `store` and `logger` unless they are given. */
export type LimiterOptions = RateLimitOptions<never>;

export interface RouteSpec {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  /** The route's own limiter (Express/Koa: route middleware; Fastify: `config.rateLimit`), or `false` to opt out. */
  readonly limit?: LimiterOptions | false;
}

/** The app: `GET /a` and `GET /b` under the app-wide limiter (if any), plus `routes`. */
export interface AppSpec {
  readonly trustProxy?: boolean;
  readonly global?: LimiterOptions;
  readonly routes?: readonly RouteSpec[];
}

/** One response, with lower-case header names. */
export interface TestResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: string;
}

/** A built app to send requests to. */
export interface TestApp {
  /**
   * Sends a request and reads its response. `signal` hangs the client up when it aborts: the connection
   * closes (or, without a socket, the `Request`'s signal aborts), and the promise rejects or resolves
   * with whatever the framework then answers, which nobody reads.
   */
  send(
    method: 'GET' | 'HEAD' | 'POST',
    path: string,
    headers?: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<TestResponse>;
  close(): Promise<void>;
}

/** Builds apps of one framework (and major version). */
export interface FrameworkDriver {
  readonly name: string;
  readonly reader: RequestReader;
  build(spec: AppSpec): Promise<TestApp>;
}

/** What the runner adds to every limiter of a scenario. */
export interface LimiterDefaults {
  readonly store: Store;
  readonly logger: { warn(message: string): void; error(message: string): void };
  /** The sleep of a limiter with `delay`, unless it brings its own. */
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}
