/**
 * A GraphQL resolver's call, read from its arguments without `@nestjs/graphql`: the HTTP request under
 * it (or a subscription's upgrade request), the HTTP response when the context reaches one, and the
 * refusal as a GraphQL error.
 */
import type { RateLimitInfo, RateLimitRejection } from '@tollgate/core';
import type { ResponseAccess } from '@tollgate/core/adapter';
import { GraphQLRateLimitError } from '../graphql-rate-limit-error.js';

/** What a resolver's call is charged as: its request, and the HTTP response its headers go on, if any. */
export interface GraphQLCall {
  /** Express's `req`, Fastify's `request`, or the upgrade request of a subscription over WebSocket. */
  readonly request: object | undefined;
  /** Express's `res` or Fastify's `reply`; `undefined` where no HTTP answer is being made (subscriptions). */
  readonly response: object | undefined;
}

/** The fields of a GraphQL context that Nest's drivers and the GraphQL servers under them fill. */
interface GraphQLContextLike {
  /** Nest's drivers: the request (Apollo over graphql-ws: graphql-ws's own context, with `extra`). */
  readonly req?: unknown;
  /** Mercurius: Fastify's reply, or `{ request }` in a subscription; Apollo on Fastify, if the app puts it. */
  readonly reply?: unknown;
  /** The response, where the app's context function puts it. */
  readonly res?: unknown;
  /** graphql-ws's context, where the app's context function returns it: `{ request, socket }`. */
  readonly extra?: unknown;
}

type Fields = Readonly<Record<string, unknown>>;

function isObject(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null;
}

/**
 * The request and response of a resolver's call, from the resolver's arguments (`context.getArgs()`):
 * `[root, args, context, info]`, or `[root, context, info]` for a federation reference resolver.
 * - Mercurius: the context's `reply` (Fastify's) and its `request`; in a subscription, `reply.request`
 *   alone, the upgrade request.
 * - Apollo on Express: the context's `req`, and its `res` (Express's).
 * - Apollo on Fastify: the context's `req`; its `reply` too when the app's context function puts it
 *   there (`context: (req, reply) => ({ req, reply })`), else no headers are written.
 * - A subscription over graphql-ws: the connection's upgrade request (`extra.request`).
 */
export function graphqlCall(args: readonly unknown[]): GraphQLCall {
  const context = args.length === 3 ? args[1] : args[2];
  if (!isObject(context)) return { request: undefined, response: undefined };
  const { req, reply, res, extra } = context as GraphQLContextLike;
  if (isObject(reply) && isObject(reply.request)) {
    // Fastify's reply has the Node.js response under `raw`; Mercurius's subscription context has none.
    return { request: reply.request, response: isObject(reply.raw) ? reply : undefined };
  }
  const upgrade = upgradeRequestOf(extra) ?? (isObject(req) ? upgradeRequestOf(req.extra) : undefined);
  if (upgrade !== undefined) return { request: upgrade, response: undefined };
  if (!isObject(req)) return { request: undefined, response: undefined };
  const response = [res, req.res].find(isNodeResponse);
  return { request: req, response };
}

/** graphql-ws's `extra.request`: the upgrade request of the connection. */
function upgradeRequestOf(extra: unknown): object | undefined {
  return isObject(extra) && isObject(extra.request) ? extra.request : undefined;
}

/** An Express (Node.js) response. */
function isNodeResponse(value: unknown): value is object {
  return isObject(value) && typeof value.setHeader === 'function';
}

/**
 * The writers of each response's rate-limit fields: one limiter's mark, or {@link SEVERAL}. One GraphQL
 * operation may run several guarded resolvers on one response.
 */
const writers = new WeakMap<object, object>();
const SEVERAL = {};

/**
 * `access` for GraphQL: a refusal is thrown as a {@link GraphQLRateLimitError}, and a limiter that
 * checks a second resolver of the operation writes its fields anew rather than listing its policies
 * twice (the fields then describe its later check). Another limiter's fields are stacked, as for HTTP.
 * The request it is given is the guard's view of one call (see `exposeOnRequest`). Made once per
 * limiter and platform.
 */
export function forGraphQL<Req, Res>(access: ResponseAccess<Req, Res>): ResponseAccess<Req, Res> {
  const mark = {};
  return {
    node: access.node,
    getHeader(response, name) {
      return writers.get(access.node(response)) === mark ? undefined : access.getHeader(response, name);
    },
    setHeaders(response, headers) {
      access.setHeaders(response, headers);
      const raw = access.node(response);
      const before = writers.get(raw);
      writers.set(raw, before === undefined || before === mark ? mark : SEVERAL);
    },
    removeHeader: access.removeHeader,
    expose: exposeOnRequest,
    send: throwForGraphQL,
  };
}

/**
 * Puts a call's info on the HTTP request, where the resolver reads it: the guard hands the lifecycle a
 * view of the request per call, whose prototype is the request.
 */
function exposeOnRequest(call: unknown, property: string, info: RateLimitInfo): void {
  (Object.getPrototypeOf(call) as Record<string, unknown>)[property] = info;
}

function throwForGraphQL(_response: unknown, rejection: RateLimitRejection, info?: RateLimitInfo): never {
  throw new GraphQLRateLimitError(rejection, info as RateLimitInfo);
}
