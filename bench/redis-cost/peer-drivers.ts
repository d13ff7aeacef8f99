/**
 * The peers, each through its own library and so its own Lua: rate-limit-redis (the store
 * express-rate-limit calls, `increment(key)`), @fastify/rate-limit's Redis store (`incr`, as the plugin
 * calls it for a route), rate-limiter-flexible's `RateLimiterRedis.consume(key)`. All three count a fixed
 * window, each with its default key prefix.
 */
import FastifyRedisStore from '@fastify/rate-limit/store/RedisStore.js';
import type { Options as ExpressRateLimitOptions } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import { RedisStore as RateLimitRedisStore, type RedisReply } from 'rate-limit-redis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import type { Check, CostDriver } from './cost-types.js';
import { ALL_SHAPES } from './shapes.js';

/** No check of the cost rows reaches it. */
const HIGH = 1e9;
const WINDOW_MS = 60_000;

/** A peer library: its name, and a check of `limit` per minute on `redis`. */
export interface Peer {
  readonly label: string;
  open(redis: Redis, limit: number): Promise<Check>;
}

export const PEERS: readonly Peer[] = [
  { label: 'express-rate-limit + rate-limit-redis', open: rateLimitRedis },
  { label: '@fastify/rate-limit, Redis store', open: async (redis, limit) => fastifyRateLimit(redis, limit) },
  {
    label: 'rate-limiter-flexible, RateLimiterRedis',
    open: async (redis, limit) => rateLimiterFlexible(redis, limit),
  },
];

/** The peers' cost drivers, on `clients.pipelined` (auto-pipelining, their best), limit 1e9 per minute. */
export function peerDrivers(): CostDriver[] {
  return PEERS.map((peer) => ({
    label: peer.label,
    family: 'peer',
    floor: 'INCR, PEXPIRE',
    shapes: ALL_SHAPES,
    open: async (clients) => ({ check: await peer.open(clients.pipelined, HIGH) }),
  }));
}

async function rateLimitRedis(redis: Redis, limit: number): Promise<Check> {
  const store = new RateLimitRedisStore({
    sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<RedisReply>,
  });
  // express-rate-limit gives its store the whole resolved config; the store reads windowMs alone.
  await store.init({ windowMs: WINDOW_MS } as ExpressRateLimitOptions);
  return async (owner) => (await store.increment(owner)).totalHits <= limit;
}

function fastifyRateLimit(redis: Redis, limit: number): Check {
  // The plugin's store for `GET /`, as it derives it for each route it limits.
  const store = new FastifyRedisStore(false, false, redis).child({
    routeInfo: { method: 'GET', url: '/' },
    continueExceeding: false,
    exponentialBackoff: false,
  });
  return (owner) =>
    new Promise((resolve, reject) => {
      store.incr(
        owner,
        (error, result) => (error ? reject(error) : resolve((result?.current ?? Number.NaN) <= limit)),
        WINDOW_MS,
        limit,
      );
    });
}

function rateLimiterFlexible(redis: Redis, limit: number): Check {
  const limiter = new RateLimiterRedis({ storeClient: redis, points: limit, duration: WINDOW_MS / 1000 });
  return (owner) =>
    limiter.consume(owner).then(
      () => true,
      (rejection: unknown) => {
        // A refusal is a RateLimiterRes; an Error is Redis failing.
        if (rejection instanceof Error) throw rejection;
        return false;
      },
    );
}
