/**
 * `TollgateGuard`: charges each HTTP request, GraphQL resolver call, gateway message and microservice
 * message to its handler's limiter, and refuses the way each context answers.
 */
import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { ClientAddressError, type RateLimitInfo, type RateLimitRejection } from '@tollgate/core';
import { graphqlCall } from './contexts/graphql.js';
import { isEventHandler, messageRefusal, rpcRequest, wsRequest } from './contexts/messages.js';
import { GraphQLRateLimitError } from './graphql-rate-limit-error.js';
import { ADAPTER } from './options.js';
import type { Lifecycle } from './platforms.js';
import { RateLimitException } from './rate-limit-exception.js';
import { refusalDetails, refusalSentence } from './refusal-details.js';
import { type ContextLimiter, TollgateLimiters } from './tollgate-limiters.js';

/**
 * The guard that rate-limits, in every context Nest runs guards in. Use it app-wide (`{ provide:
 * APP_GUARD, useClass: TollgateGuard }`) or on a class or handler (`@UseGuards(TollgateGuard)`), not
 * both on one handler (it would charge twice). A handler's limiter is its `@RateLimit`, else its
 * class's (controller, resolver or gateway), else the module's app-wide one; `@SkipRateLimit()` lets
 * it through.
 *
 * - **HTTP**: an allowed request gets the rate-limit headers and its `RateLimitInfo` on `req.rateLimit`;
 *   a refused one the headers and a `RateLimitException` (429, or 403 when its cost exceeds a capacity)
 *   for the exception filters. A request whose client has gone, or whose response head something else
 *   already sent, is not served: the guard answers `false`.
 * - **GraphQL** (`@nestjs/graphql`, Apollo or Mercurius): each guarded resolver call (a query's or a
 *   mutation's root field, a subscription's start) is charged as a request of the HTTP request under
 *   it; the headers go on the HTTP response when the context reaches it; a refusal is a
 *   `GraphQLRateLimitError`, which the GraphQL server answers as an error with its `extensions`.
 * - **WebSocket** (`@SubscribeMessage`): each message, with a `NestWsRequest`; a refusal is a
 *   `WsException` whose error is the refusal's details.
 * - **Microservices** (`@MessagePattern`, `@EventPattern`): each message, with a `NestRpcRequest`; a
 *   refusal is an `RpcException` whose error is the refusal's details. A refused event is dropped.
 *
 * A context of another type (a custom transport's) is let through unlimited.
 *
 * @example
 * @Module({
 *   imports: [TollgateModule.forRoot({ limit: 100, window: '1m', store })],
 *   providers: [{ provide: APP_GUARD, useClass: TollgateGuard }],
 * })
 * export class AppModule {}
 */
export class TollgateGuard implements CanActivate {
  constructor(private readonly limiters: TollgateLimiters) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const type = context.getType<string>();
    if (type !== 'http' && type !== 'graphql' && type !== 'ws' && type !== 'rpc') return true;
    const limiter = this.limiters.forRoute(context.getHandler(), context.getClass());
    if (limiter === undefined) return true;
    switch (type) {
      case 'http': {
        const http = context.switchToHttp();
        return handled(limiter.http, http.getRequest(), http.getResponse());
      }
      case 'graphql':
        return checkGraphQL(limiter, context.getArgs());
      case 'ws':
        return checkMessage(limiter, wsRequest(context), 'ws');
      default:
        return checkMessage(
          limiter,
          rpcRequest(context),
          isEventHandler(context.getHandler()) ? 'event' : 'rpc',
        );
    }
  }
}

// Decorated by calls, not by syntax: this file then compiles the same under any TypeScript setup (tsx, for
// one, compiles a workspace package's source with TC39 decorators), and needs no `emitDecoratorMetadata`.
Injectable()(TollgateGuard);
Inject(TollgateLimiters)(TollgateGuard, undefined, 0);

/** Runs a lifecycle: `true` to go on; its error thrown; `false` when nobody is left to answer. */
async function handled(lifecycle: Lifecycle, request: unknown, response: unknown): Promise<boolean> {
  const outcome = await lifecycle(request, response);
  if (outcome.kind === 'error') throw outcome.error;
  return outcome.kind === 'next';
}

/**
 * A resolver's call: through the HTTP lifecycle when the context reaches the HTTP response (headers
 * included), else checked alone (a subscription's start).
 */
async function checkGraphQL(limiter: ContextLimiter, args: readonly unknown[]): Promise<boolean> {
  const { request, response } = graphqlCall(args);
  if (request === undefined) {
    throw new ClientAddressError(
      `${ADAPTER}: this GraphQL context holds no request (context.req, or Mercurius's context.reply), so ` +
        'no key can be read: keep the request in the context your context function returns',
    );
  }
  // One operation checks its request once per guarded resolver (a subscription's upgrade request once
  // per start): each check gets a view of its own, so that the limiter does not take a second check of
  // one request for a limiter mounted twice. The view reads through to the request (its `ip` getter
  // included); `forGraphQL` puts the info on the request itself.
  const call: object = Object.create(request);
  if (response !== undefined) return handled(limiter.graphql, call, response);
  const refused = await refusalOf(limiter, call);
  if (refused !== undefined) throw new GraphQLRateLimitError(refused.rejection, refused.info);
  return true;
}

/**
 * A gateway's or a microservice's message: refused with Nest's exception of the context, which Nest
 * sends to the client or the caller. An event has nobody to answer: it is dropped with a
 * `RateLimitException`, which Nest's filter for microservices drops without logging it.
 */
async function checkMessage(
  limiter: ContextLimiter,
  request: object,
  type: 'ws' | 'rpc' | 'event',
): Promise<boolean> {
  const refused = await refusalOf(limiter, request);
  if (refused === undefined) return true;
  if (type === 'event') throw new RateLimitException(refused.rejection, refused.info);
  const details = refusalDetails(refused.rejection, refused.info);
  throw await messageRefusal(type, details, refusalSentence(details));
}

/** A refused call: the answer an HTTP refusal would carry, and the call's rate limit. */
interface Refusal {
  readonly rejection: RateLimitRejection;
  readonly info: RateLimitInfo;
}

/**
 * A check without an HTTP response: `undefined` to go on (skipped, or allowed), else the refusal; the
 * check's error (a store failure under `onStoreError: 'deny'`, `throwOnLimit`'s) is thrown.
 */
async function refusalOf(limiter: ContextLimiter, request: object): Promise<Refusal | undefined> {
  const outcome = await limiter.limiter.check(request as never);
  if (outcome.kind === 'error') throw outcome.error;
  if (outcome.kind !== 'limited') return undefined;
  return { rejection: await limiter.limiter.rejection(request as never, outcome.info), info: outcome.info };
}
