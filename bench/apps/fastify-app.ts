/** The Fastify 5 app of each variant: one GET route answering `ok`, behind the variant's limiter. */
import { createRequire } from 'node:module';
import { RedisStore } from '@tollgate/core';
import { tollgate } from '@tollgate/fastify';
import fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { tollgateRefusal } from './refusal.js';
import { type AppSettings, clientOf, type Variant } from './scenarios.js';

/** The options of @fastify/rate-limit that the bench sets. */
interface FastifyRateLimitOptions {
  max: number;
  timeWindow: number;
  keyGenerator: (request: FastifyRequest) => string;
  redis: Redis | undefined;
  nameSpace: string;
}

/**
 * @fastify/rate-limit, loaded without its type declarations: they declare Fastify's route
 * `config.rateLimit` with its own type, as @tollgate/fastify does with Tollgate's, and one program (the
 * bench's typecheck) cannot hold both.
 */
const fastifyRateLimit = createRequire(import.meta.url)(
  '@fastify/rate-limit',
) as FastifyPluginAsync<FastifyRateLimitOptions>;

/** Builds (and readies) the app of `variant`; `redis` is a connected, fail-fast client for Redis variants. */
export async function fastifyApp(
  variant: Variant,
  { scenario, keyPrefix }: AppSettings,
  redis: Redis | undefined,
): Promise<FastifyInstance> {
  const app = fastify();
  switch (variant) {
    case 'none':
      break;
    case 'refusal-floor': {
      // Sent as @tollgate/fastify sends its own: as is, through an identity serializer.
      const { status, headers, contentType, body } = await tollgateRefusal(scenario);
      app.addHook('onRequest', async (_request, reply) =>
        reply.code(status).headers(headers).type(contentType).serializer(asIs).send(body),
      );
      break;
    }
    case 'tollgate-redis':
    case 'tollgate-memory':
      await app.register(tollgate, {
        limit: scenario.limit,
        window: scenario.windowMs,
        key: (request) => clientOf(request.headers),
        ...(variant === 'tollgate-redis' && {
          store: new RedisStore({ client: redis as Redis, prefix: `${keyPrefix}tollgate:` }),
        }),
      });
      break;
    case 'fastify-rate-limit':
      await app.register(fastifyRateLimit, {
        max: scenario.limit,
        timeWindow: scenario.windowMs,
        keyGenerator: (request) => clientOf(request.headers),
        redis,
        nameSpace: `${keyPrefix}frl:`,
      });
      break;
    default:
      throw new Error(`no Fastify app for ${variant}`);
  }
  app.get('/', async () => 'ok');
  await app.ready();
  return app;
}

function asIs(body: string): string {
  return body;
}
