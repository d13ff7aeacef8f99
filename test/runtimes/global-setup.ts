/**
 * Vitest global setup: the one Redis the runtime suites share, started here and stopped after
 * (`REDIS_URL` points them elsewhere). They need no cluster and no TLS Redis.
 */
import type { TestProject } from 'vitest/node';
import { startRedisServer } from '../harness/redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const url = process.env.REDIS_URL;
  if (url) {
    project.provide('redisUrl', url);
    return async () => {};
  }
  const server = await startRedisServer();
  project.provide('redisUrl', server.url);
  return () => server.stop();
}
