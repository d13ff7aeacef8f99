/**
 * Reading Nest's requests and writing its responses on both platforms: Express (`req`, `res`) and
 * Fastify (`request`, `reply`, whose `raw` is the Node.js response). A refusal is thrown, for Nest's
 * exception filters, rather than written.
 */
import type { ServerResponse } from 'node:http';
import type { RateLimitInfo, RateLimitRejection } from '@tollgate/core';
import {
  answersLeftmostForwarded,
  endWithRejection,
  type Handled,
  type NodeShapedRequest,
  nodeRequestAccess,
  nodeResponses,
  type RequestAccess,
  type ResponseAccess,
} from '@tollgate/core/adapter';
import { RateLimitException } from './rate-limit-exception.js';

/** Express's `res`: a Node.js response with `json`, the method Nest's exception filter sends with. */
interface ExpressResponse extends ServerResponse {
  json(body: unknown): unknown;
}

/** What Tollgate uses of Fastify's `reply`. */
interface FastifyReply {
  readonly raw: ServerResponse;
  code(status: number): FastifyReply;
  type(contentType: string): FastifyReply;
  serializer(serialize: (payload: string) => string): FastifyReply;
  send(payload?: unknown): FastifyReply;
  headers(headers: Readonly<Record<string, string>>): FastifyReply;
  getHeader(name: string): unknown;
  removeHeader(name: string): FastifyReply;
}

type AnyRequest = NodeShapedRequest & { readonly app?: { get(setting: string): unknown } };

const nodeShaped = nodeRequestAccess<AnyRequest>((request) =>
  typeof request.app?.get === 'function'
    ? request.app.get('trust proxy') === true
    : // Fastify keeps trustProxy to itself; its request's `ip` getter, asked about a made-up request, tells.
      answersLeftmostForwarded(
        (raw) => Object.create(Object.getPrototypeOf(request), { raw: { value: raw } }).ip,
      ),
);

/**
 * How the limiters read what the guard hands them: a platform's request, the upgrade request of a
 * GraphQL subscription over WebSocket (Node.js's own, which has no `ip`: its socket's peer is the
 * client), or a message's request (`NestWsRequest`, `NestRpcRequest`, whose `ip` is their own).
 */
export const nestRequests: RequestAccess<AnyRequest> = {
  ...nodeShaped,
  ip: (request) => ('ip' in request ? request.ip || undefined : request.socket?.remoteAddress),
};

/** The client-IP setting of either platform, as a Nest app writes it: the core's warnings name it. */
export const CLIENT_IP_SETTING = {
  name: "the platform's setting (app.set('trust proxy', …) on Express, new FastifyAdapter({ trustProxy }) on Fastify)",
  trustExactly:
    "the platform's setting (app.set('trust proxy', …) on Express, new FastifyAdapter({ trustProxy }) on " +
    'Fastify) with their addresses or their number',
} as const;

const expressResponses: ResponseAccess<AnyRequest, ExpressResponse> = {
  ...nodeResponses,
  send: (res, refusal, info) => throwForFilters(res, 'json', refusal, info, endWithRejection),
};

const fastifyResponses: ResponseAccess<AnyRequest, FastifyReply> = {
  node: (reply) => reply.raw,
  getHeader: (reply, name) => reply.getHeader(name),
  setHeaders: (reply, headers) => void reply.headers(headers),
  removeHeader: (reply, name) => void reply.removeHeader(name),
  send: (reply, refusal, info) => throwForFilters(reply, 'send', refusal, info, sendAsIs),
};

/**
 * Throws the refusal for Nest's exception filters. The default filter sends an exception's body with
 * Express's `res.json` or Fastify's `reply.send`, which add a charset that application/problem+json
 * lacks (and would turn a text answer into JSON): so that method of the refused response is wrapped, and
 * the exception's own body, sent unchanged, goes out exactly as the limiter wrote it (`asWritten`);
 * anything else a filter of the app sends goes through untouched.
 */
function throwForFilters<M extends string, Res extends { [method in M]: (body: unknown) => unknown }>(
  response: Res,
  method: M,
  refusal: RateLimitRejection,
  info: RateLimitInfo | undefined,
  asWritten: (response: Res, refusal: RateLimitRejection) => unknown,
): never {
  const exception = new RateLimitException(refusal, info);
  const answer = exception.getResponse();
  const send = response[method];
  response[method] = ((body: unknown) =>
    body === answer ? asWritten(response, refusal) : send.call(response, body)) as Res[M];
  throw exception;
}

/** The refusal on Fastify's reply: a string through an identity serializer, to which Fastify adds no charset. */
function sendAsIs(reply: FastifyReply, { status, contentType, body }: RateLimitRejection): unknown {
  return reply.code(status).type(contentType).serializer(asIs).send(body);
}

function asIs(body: string): string {
  return body;
}

/** A core lifecycle for requests of either platform. */
export type Lifecycle = (request: unknown, response: unknown) => Promise<Handled>;

/**
 * Builds `lifecycle` once per platform and runs, per request, the one of the request's platform: a
 * Fastify `reply` has `raw`, an Express `res` is the Node.js response itself.
 */
export function onEitherPlatform(
  lifecycle: <Res>(
    access: ResponseAccess<AnyRequest, Res>,
  ) => (request: AnyRequest, response: Res) => Promise<Handled>,
): Lifecycle {
  const onExpress = lifecycle(expressResponses);
  const onFastify = lifecycle(fastifyResponses);
  return (request, response) =>
    typeof response === 'object' && response !== null && 'raw' in response
      ? onFastify(request as AnyRequest, response as FastifyReply)
      : onExpress(request as AnyRequest, response as ExpressResponse);
}
