/**
 * One app server of the overload test: Express, Fastify, Koa, Hono or NestJS with Tollgate's defaults on
 * a shared Redis, and a handler that now and then blocks the event loop for longer than the default
 * timeout, while the checks of the requests that arrived just before it are waiting for Redis's answers.
 * Prints its port when it listens. argv: framework redisUrl limiterName
 */
import 'reflect-metadata';
import { createServer, type RequestListener } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import { Controller, Get, Module } from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { RedisStore } from '@tollgate/core';
import { rateLimit as expressRateLimit } from '@tollgate/express';
import { tollgate } from '@tollgate/fastify';
import { rateLimit as honoRateLimit } from '@tollgate/hono';
import { rateLimit as koaRateLimit } from '@tollgate/koa';
import { TollgateGuard, TollgateModule } from '@tollgate/nestjs';
import express from 'express';
import fastify from 'fastify';
import { Hono } from 'hono';
import { Redis } from 'ioredis';
import Koa from 'koa';

const [framework = '', redisUrl = '', name = ''] = process.argv.slice(2);
const client = new Redis(redisUrl, {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  enableAutoPipelining: true,
});
client.on('error', (error) => console.error(`redis: ${error.message}`));
await new Promise((resolve) => client.once('ready', resolve));
const store = new RedisStore({ client });
const options = { limit: 100, window: '1h', name, store } as const;

let requests = 0;

/** Every 125th request blocks this process for 1.1 s before its own check, as a slow handler would. */
function hogSometimes(): void {
  if (++requests % 125 !== 0) return;
  const until = performance.now() + 1_100;
  while (performance.now() < until);
}

/** A Nest app on Express (decorators applied by calls: the workspace compiles without decorator syntax). */
async function nestListener(): Promise<RequestListener> {
  class AppController {
    get() {
      return 'ok';
    }
  }
  Controller()(AppController);
  const get = Object.getOwnPropertyDescriptor(AppController.prototype, 'get') as PropertyDescriptor;
  Get()(AppController.prototype, 'get', get);
  class AppModule {}
  Module({
    imports: [TollgateModule.forRoot(options)],
    controllers: [AppController],
    providers: [{ provide: APP_GUARD, useClass: TollgateGuard }],
  })(AppModule);
  const server = express();
  server.use((_req, _res, next) => {
    hogSometimes();
    next();
  });
  const app = await NestFactory.create(AppModule, new ExpressAdapter(server), { logger: false });
  await app.init();
  return server;
}

function honoListener(): RequestListener {
  const app = new Hono();
  app.use(async (_c, next) => {
    hogSometimes();
    await next();
  });
  app.use(honoRateLimit({ ...options, getConnInfo }));
  app.get('/', (c) => c.text('ok'));
  return getRequestListener(app.fetch);
}

async function listener(): Promise<RequestListener> {
  if (framework === 'nestjs') return nestListener();
  if (framework === 'hono') return honoListener();
  if (framework === 'express') {
    const app = express();
    app.use((_req, _res, next) => {
      hogSometimes();
      next();
    });
    app.use(expressRateLimit(options));
    app.get('/', (_req, res) => void res.send('ok'));
    return app;
  }
  if (framework === 'koa') {
    const app = new Koa();
    app.use((_ctx, next) => {
      hogSometimes();
      return next();
    });
    app.use(koaRateLimit(options));
    app.use((ctx) => {
      ctx.body = 'ok';
    });
    return app.callback();
  }
  // Fastify hands its request listener to the server factory; the test's own server runs it.
  let handle: RequestListener | undefined;
  const app = fastify({
    serverFactory: (listener) => {
      handle = listener;
      return createServer();
    },
  });
  app.addHook('onRequest', async () => hogSometimes());
  await app.register(tollgate, options);
  app.get('/', async () => 'ok');
  await app.ready();
  return handle as RequestListener;
}

const server = createServer(await listener());
server.listen({ port: 0, host: '127.0.0.1', backlog: 2048 }, () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => process.exit(0));
