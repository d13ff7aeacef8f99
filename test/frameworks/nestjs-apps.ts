/**
 * Real Nest apps for the `@tollgate/nestjs` tests, on both platforms: built with `@nestjs/testing`,
 * listening on a loopback port, asked over real HTTP with `fetch`.
 */
import type { Server } from 'node:http';
import type { ModuleMetadata } from '@nestjs/common';
import type { AbstractHttpAdapter } from '@nestjs/core';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import type { TestResponse } from './app-spec.js';

/** A Nest platform: how to make its HTTP adapter, and how a handler answers on its response. */
export interface NestPlatform {
  readonly name: 'Express' | 'Fastify';
  adapter(trustProxy: boolean): AbstractHttpAdapter;
  /** Sends `body` with `status` from a handler that took the response with `@Res()`. */
  answer(response: unknown, status: number, body: string): void;
}

interface ExpressLike {
  status(code: number): { send(body: string): void };
}
interface FastifyLike {
  code(code: number): { send(body: string): void };
}

export const nestPlatforms: readonly NestPlatform[] = [
  {
    name: 'Express',
    adapter: () => new ExpressAdapter(),
    answer: (res, status, body) => (res as ExpressLike).status(status).send(body),
  },
  {
    name: 'Fastify',
    adapter: (trustProxy) => new FastifyAdapter({ trustProxy }),
    answer: (reply, status, body) => (reply as FastifyLike).code(status).send(body),
  },
];

/** A Nest app listening on 127.0.0.1, and how to ask it. */
export interface RunningNestApp {
  readonly url: string;
  /** The Node.js server, for tests that need real sockets they can abort. */
  readonly server: Server;
  /** Sends a request over real HTTP; `signal` hangs the client up when it aborts. */
  send(
    method: string,
    path: string,
    headers?: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<TestResponse>;
  close(): Promise<void>;
}

/** Compiles `metadata` into an app on `platform` and listens on a free loopback port. */
export async function startNestApp(
  platform: NestPlatform,
  metadata: ModuleMetadata,
  { trustProxy = false } = {},
): Promise<RunningNestApp> {
  const moduleRef = await Test.createTestingModule(metadata).compile();
  const app = moduleRef.createNestApplication(platform.adapter(trustProxy), { logger: false });
  if (platform.name === 'Express' && trustProxy) (app as NestExpressApplication).set('trust proxy', true);
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  return {
    url,
    server: app.getHttpServer() as Server,
    async send(method, path, headers = {}, signal = undefined) {
      const response = await fetch(`${url}${path}`, { method, headers, signal: signal ?? null });
      return {
        status: response.status,
        headers: Object.fromEntries(response.headers),
        body: await response.text(),
      };
    },
    close: async () => {
      // Connections a hung-up client left open would hold the close up until their keep-alive ends.
      (app.getHttpServer() as Server).closeAllConnections();
      await app.close();
    },
  };
}
