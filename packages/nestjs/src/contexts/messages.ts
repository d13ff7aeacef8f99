/**
 * Messages: a WebSocket gateway's (`@SubscribeMessage`) and a microservice's (`@MessagePattern`,
 * `@EventPattern`). What key functions get for one, and the refusal as Nest's exception of the context,
 * loaded from the app's own `@nestjs/websockets` or `@nestjs/microservices` when first needed.
 */
import type { ExecutionContext } from '@nestjs/common';
import { TollgateError } from '@tollgate/core';
import type { RateLimitDetails } from '../refusal-details.js';

/** No headers: what a message that carries none offers a key function reading one. */
const NO_HEADERS: Readonly<Record<string, undefined>> = Object.freeze({});

/**
 * What key functions, `skip`, `cost` and the callbacks get for a WebSocket gateway's message
 * (`@SubscribeMessage`): one per message.
 *
 * @example
 * @RateLimit({ limit: 5, window: '1s', key: byUser((req: NestWsRequest<ChatMessage, AuthedSocket>) => req.client.user?.id) })
 * @SubscribeMessage('chat')
 * chat() {}
 */
export interface NestWsRequest<Data = unknown, Client = unknown> {
  readonly type: 'ws';
  /** The connection: `ws`'s `WebSocket` (`@nestjs/platform-ws`), or Socket.IO's `Socket`. */
  readonly client: Client;
  /** The message's payload. */
  readonly data: Data;
  /** The message's event name, as `@SubscribeMessage` names it. */
  readonly pattern: unknown;
  /** Socket.IO: the handshake's headers. `ws` keeps no headers of the connection: none. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /**
   * The peer's address: Socket.IO's `handshake.address`, or the TCP socket's under `ws`. No proxy's
   * `X-Forwarded-For` is read: behind a proxy, key by what the app set on the client when it connected.
   */
  readonly ip: string | undefined;
}

/**
 * What key functions, `skip`, `cost` and the callbacks get for a microservice's message
 * (`@MessagePattern`, `@EventPattern`): one per message.
 *
 * @example
 * @RateLimit({ limit: 100, window: '1m', key: (req: NestRpcRequest<{ tenant: string }>) => `tenant:${req.data.tenant}` })
 * @MessagePattern('report')
 * report() {}
 */
export interface NestRpcRequest<Data = unknown, Context = unknown> {
  readonly type: 'rpc';
  /** The transport's context: `TcpContext`, `NatsContext`, `RedisContext`, … */
  readonly context: Context;
  /** The message's payload. */
  readonly data: Data;
  /** The message's pattern, where the transport's context says it (`TcpContext.getPattern()`). */
  readonly pattern: unknown;
  /** None: a transport's own headers are read from `context` (`NatsContext.getHeaders()`). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The TCP transport: the calling process's address. Other transports: none, so give a `key`. */
  readonly ip: string | undefined;
}

type Fields = Readonly<Record<string, unknown>>;

function fieldsOf(value: unknown): Fields | undefined {
  return typeof value === 'object' && value !== null ? (value as Fields) : undefined;
}

function stringOr(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The request of a gateway's message: its arguments are `[client, data, pattern]`. */
export function wsRequest(context: ExecutionContext): NestWsRequest {
  const [client, data, pattern] = context.getArgs();
  const socket = fieldsOf(client);
  // Socket.IO keeps the handshake; `ws` keeps only its TCP socket (the field Nest's own docs read).
  const handshake = fieldsOf(socket?.handshake);
  const tcp = fieldsOf(socket?._socket);
  const headers = fieldsOf(handshake?.headers) as NestWsRequest['headers'] | undefined;
  return {
    type: 'ws',
    client,
    data,
    pattern,
    headers: headers ?? NO_HEADERS,
    ip: stringOr(handshake?.address) ?? stringOr(tcp?.remoteAddress),
  };
}

/** The request of a microservice's message: its arguments are `[data, context]`. */
export function rpcRequest(context: ExecutionContext): NestRpcRequest {
  const [data, transport] = context.getArgs();
  const fields = fieldsOf(transport);
  const call = (method: string): unknown =>
    typeof fields?.[method] === 'function' ? (fields[method] as () => unknown).call(transport) : undefined;
  // TcpContext: the JSON socket, whose `netSocket` is the connection.
  const tcp = fieldsOf(fieldsOf(call('getSocketRef'))?.netSocket);
  return {
    type: 'rpc',
    context: transport,
    data,
    pattern: call('getPattern'),
    headers: NO_HEADERS,
    ip: stringOr(tcp?.remoteAddress),
  };
}

/** The metadata `@EventPattern` and `@MessagePattern` put on a handler: which of the two it is. */
const PATTERN_HANDLER = 'microservices:handler_type';
/** `@EventPattern`'s value of it (Nest's `PatternHandler.EVENT`). */
const EVENT_HANDLER = 2;

/**
 * Whether `handler` is an `@EventPattern` handler: an event has no caller to answer, and Nest logs an
 * `RpcException` that no filter took as an error, so a refused event is not refused with one.
 */
export function isEventHandler(handler: object): boolean {
  const { getMetadata } = Reflect as { getMetadata?: (key: string, target: object) => unknown };
  return getMetadata?.(PATTERN_HANDLER, handler) === EVENT_HANDLER;
}

/** A Nest exception of a message context, made from an error object: `WsException`, `RpcException`. */
type ContextException = new (error: object) => Error;

/** Where each context's exception comes from: the app's own copy of the package. */
const EXCEPTIONS = {
  ws: { from: '@nestjs/websockets', name: 'WsException' },
  rpc: { from: '@nestjs/microservices', name: 'RpcException' },
} as const;

const loaded: { ws?: Promise<ContextException>; rpc?: Promise<ContextException> } = {};

/**
 * The exception Nest's filters of `type` answer with its error object: `WsException` (sent to the client
 * as an `exception` event) or `RpcException` (the caller's error). Loaded once, when the guard first
 * meets the context: the package is there, since the app runs gateways or microservices with it.
 */
export function contextException(type: 'ws' | 'rpc'): Promise<ContextException> {
  let exception = loaded[type];
  if (exception === undefined) {
    const { from, name } = EXCEPTIONS[type];
    // A specifier in a variable: the package is an optional peer, not a dependency to resolve at build.
    const specifier: string = from;
    exception = import(specifier).then((module: Fields) => {
      const found = module[name] ?? fieldsOf(module.default)?.[name];
      if (typeof found !== 'function')
        throw new TollgateError('TOLLGATE_INTERNAL', `@tollgate/nestjs: ${from} exports no ${name}`);
      return found as ContextException;
    });
    loaded[type] = exception;
  }
  return exception;
}

/**
 * The refusal of a message: `WsException` or `RpcException`, whose error is the refusal's details with
 * a `message` (the detail sentence), as Nest's clients read errors.
 */
export async function messageRefusal(
  type: 'ws' | 'rpc',
  details: RateLimitDetails,
  message: string,
): Promise<Error> {
  const Exception = await contextException(type);
  return new Exception({ ...details, message });
}
