/**
 * Vitest global setup: the one Redis the NestJS suites use, started here and stopped after (`REDIS_URL`
 * points them elsewhere). They need no cluster and no TLS Redis, so `test/harness/global-setup.ts`, which
 * starts those too, would only slow this run down.
 */
import type { TestProject } from 'vitest/node';
import { startRedisServer } from '../harness/redis-server.js';

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
