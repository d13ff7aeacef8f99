/**
 * Fastify: routes added right after `app.register(tollgate, …)` without `await` (before the plugin has
 * loaded, so its onRoute hook never sees them) are limited all the same, and the app is told once per limiter.
 */
import { MemoryStore } from '@tollgate/core';
import { tollgate } from '@tollgate/fastify';
import fastify5 from 'fastify';
import fastify4 from 'fastify4';
import { describe, expect, it } from 'vitest';

const frameworks = [
  ['Fastify 5', fastify5],
  ['Fastify 4', fastify4 as unknown as typeof fastify5],
] as const;

describe.each(frameworks)('%s without await on register', (_name, fastify) => {
  it('limits a route added before the plugin loaded, by its own config too, and warns once per limiter', async () => {
    const warnings: string[] = [];
    const logger = {
      warn: (line: string) => warnings.push(line),
      error: (line: string) => warnings.push(line),
    };
    const app = fastify();
    app.register(tollgate, { limit: 2, window: '1h', store: new MemoryStore(), logger });
    app.get('/x', async () => 'x');
    app.get('/strict', { config: { rateLimit: { limit: 1 } } }, async () => 'strict');
    app.get('/free', { config: { rateLimit: false } }, async () => 'free');
    await app.ready();
    const statuses = async (url: string, times: number) => {
      const seen: number[] = [];
      for (let i = 0; i < times; i++) seen.push((await app.inject(url)).statusCode);
      return seen;
    };
    try {
      expect(await statuses('/x', 3)).toEqual([200, 200, 429]);
      expect(await statuses('/strict', 2)).toEqual([200, 429]);
      expect(await statuses('/free', 3)).toEqual([200, 200, 200]);
      expect((await app.inject('/nowhere')).statusCode).toBe(404); // the 404 handler stays the app's
      // Once per limiter: the plugin's, for /x (and every route that uses it), and /strict's own.
      expect(warnings).toHaveLength(2);
      expect(warnings[0]).toMatch(/^\[TOLLGATE_ROUTE_NOT_SEEN\] @tollgate\/fastify: route GET \/x was added/);
      expect(warnings[1]).toMatch(
        /^\[TOLLGATE_ROUTE_NOT_SEEN\] @tollgate\/fastify \(route GET \/strict\): route GET/,
      );
    } finally {
      await app.close();
    }
  });

  it('limits each route once when the plugin saw it', async () => {
    const app = fastify();
    await app.register(tollgate, { limit: 2, window: '1h', store: new MemoryStore() });
    app.get('/x', async () => 'x');
    await app.ready();
    const seen: number[] = [];
    for (let i = 0; i < 3; i++) seen.push((await app.inject('/x')).statusCode);
    expect(seen).toEqual([200, 200, 429]);
    await app.close();
  });
});
