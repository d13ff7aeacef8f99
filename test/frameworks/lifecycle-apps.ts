/**
 * Apps of every framework for the request-lifecycle tests, over real sockets: a step of the app's own
 * runs before the limiter (authentication, a body parser, a timeout middleware), then the limiter, then
 * a handler that counts its runs.
 */
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { ConcurrencyLimitOptions, RateLimitOptions } from '@tollgate/core';
import { concurrencyLimit as expressConcurrency, rateLimit as expressRateLimit } from '@tollgate/express';
import { concurrencyLimit as fastifyConcurrency, tollgate } from '@tollgate/fastify';
import { concurrencyLimit as koaConcurrency, rateLimit as koaRateLimit } from '@tollgate/koa';
import express5 from 'express';
import express4 from 'express4';
import fastify5 from 'fastify';
import fastify4 from 'fastify4';
import Koa3 from 'koa';
import Koa2 from 'koa2';

/** The app's own step before the limiter, given the Node.js request and response. */
export type BeforeLimiter = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** Which limiter the app mounts, with its options (the key function reads the Node.js request). */
export type LimiterSpec =
  | { readonly kind: 'rate'; readonly options: RateLimitOptions<never> }
  | { readonly kind: 'concurrency'; readonly options: ConcurrencyLimitOptions<never> };

/** An app: its listener, and how often its handler ran. */
export interface LifecycleApp {
  readonly listener: RequestListener;
  readonly handled: () => number;
}

export type BuildLifecycleApp = (before: BeforeLimiter, limiter: LimiterSpec) => Promise<LifecycleApp>;

/** Answers 200 unless the head is out already (a timeout middleware answered). */
function finish(res: ServerResponse): void {
  if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/plain' });
  if (!res.writableEnded) res.end('done');
}

function expressApp(express: typeof express5): BuildLifecycleApp {
  return async (before, limiter) => {
    let handled = 0;
    const app = express();
    app.use((req, res, next) => {
      before(req, res).then(() => next(), next);
    });
    app.use(
      limiter.kind === 'rate'
        ? expressRateLimit(limiter.options as never)
        : expressConcurrency(limiter.options as never),
    );
    app.get('/', (_req, res) => {
      handled++;
      finish(res);
    });
    return { listener: app, handled: () => handled };
  };
}

function fastifyApp(fastify: typeof fastify5): BuildLifecycleApp {
  return async (before, limiter) => {
    let handled = 0;
    let listener: RequestListener | undefined;
    const app = fastify({
      serverFactory: (handler) => {
        listener = handler;
        return createServer();
      },
    });
    // The check runs after the app's own onRequest step, as it does when it keys by what auth sets.
    const onRequest = async (request: { raw: IncomingMessage }, reply: { raw: ServerResponse }) =>
      before(request.raw, reply.raw);
    if (limiter.kind === 'rate') {
      await app.register(tollgate as never, { global: false });
      const config = { rateLimit: { ...limiter.options, hook: 'preHandler' } };
      app.get('/', { onRequest, config: config as never }, async (_request, reply) => {
        handled++;
        finish(reply.raw);
        return reply.hijack();
      });
    } else {
      const preHandler = fastifyConcurrency(limiter.options as never);
      app.get('/', { onRequest, preHandler }, async (_request, reply) => {
        handled++;
        finish(reply.raw);
        return reply.hijack();
      });
    }
    await app.ready();
    return { listener: listener as RequestListener, handled: () => handled };
  };
}

function koaApp(Koa: typeof Koa3): BuildLifecycleApp {
  return async (before, limiter) => {
    let handled = 0;
    const app = new Koa();
    app.silent = true;
    app.use(async (ctx, next) => {
      await before(ctx.req, ctx.res);
      await next();
    });
    app.use(
      limiter.kind === 'rate'
        ? koaRateLimit(limiter.options as never)
        : koaConcurrency(limiter.options as never),
    );
    app.use(async (ctx) => {
      handled++;
      if (ctx.res.headersSent) finish(ctx.res);
      else ctx.body = 'done';
    });
    return { listener: app.callback(), handled: () => handled };
  };
}

/** Every framework and major version Tollgate supports. */
export const lifecycleFrameworks: readonly [string, BuildLifecycleApp][] = [
  ['Express 5', expressApp(express5)],
  ['Express 4', expressApp(express4 as unknown as typeof express5)],
  ['Fastify 5', fastifyApp(fastify5)],
  ['Fastify 4', fastifyApp(fastify4 as unknown as typeof fastify5)],
  ['Koa 3', koaApp(Koa3)],
  ['Koa 2', koaApp(Koa2 as unknown as typeof Koa3)],
];
