/**
 * What the HTTP bench measures: the scenarios (limits and the load that goes with them), the frameworks,
 * and the variants of each app (no limiter, Tollgate, the peers). Shared by the app servers and the
 * orchestrator, so both read one definition.
 */

import type { Build } from '../built/built-packages.js';

/** The request header every limiter of the bench is keyed by, so the load generator can vary the client. */
export const CLIENT_HEADER = 'x-client';

export type ScenarioName = 'allow-hot' | 'allow-10k' | 'deny';

export interface Scenario {
  readonly name: ScenarioName;
  readonly title: string;
  /** Requests allowed per window. */
  readonly limit: number;
  readonly windowMs: number;
  /** How many distinct clients the load cycles through (1: one hot key). */
  readonly keys: number;
  /** What every measured request must get: 2xx (`allow`) or 429 (`deny`, after the warm-up's refusals). */
  readonly expect: 'allow' | 'deny';
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * ALLOW: a limit no run can reach. DENY: 10 per day, spent by the warm-up; a token bucket refills one
 * token every 2.4 h, and the fixed windows of the peers last a day, so no measured request is let through.
 */
export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'allow-hot',
    title: 'ALLOW, one hot key',
    limit: 1e9,
    windowMs: HOUR_MS,
    keys: 1,
    expect: 'allow',
  },
  {
    name: 'allow-10k',
    title: 'ALLOW, 10k keys',
    limit: 1e9,
    windowMs: HOUR_MS,
    keys: 10_000,
    expect: 'allow',
  },
  {
    name: 'deny',
    title: 'DENY, one key over its limit',
    limit: 10,
    windowMs: DAY_MS,
    keys: 1,
    expect: 'deny',
  },
];

/** Express 5, Fastify 5, Koa 3, Hono 4 on @hono/node-server, and NestJS 11 on Express. */
export type Framework = 'express' | 'fastify' | 'koa' | 'hono' | 'nestjs';

export const FRAMEWORKS: readonly Framework[] = ['express', 'fastify', 'koa', 'hono', 'nestjs'];

export type Variant =
  | 'none'
  | 'refusal-floor'
  | 'tollgate-redis'
  | 'tollgate-memory'
  | 'express-rate-limit'
  | 'rate-limiter-flexible'
  | 'fastify-rate-limit'
  | 'koa-ratelimit'
  | 'hono-rate-limiter'
  | 'nestjs-throttler';

/** The variants of each framework's app; the first is the baseline. */
export const VARIANTS: Readonly<Record<Framework, readonly Variant[]>> = {
  express: [
    'none',
    'refusal-floor',
    'tollgate-redis',
    'tollgate-memory',
    'express-rate-limit',
    'rate-limiter-flexible',
  ],
  fastify: ['none', 'refusal-floor', 'tollgate-redis', 'tollgate-memory', 'fastify-rate-limit'],
  koa: ['none', 'refusal-floor', 'tollgate-redis', 'tollgate-memory', 'koa-ratelimit'],
  hono: ['none', 'refusal-floor', 'tollgate-redis', 'tollgate-memory', 'hono-rate-limiter'],
  nestjs: ['none', 'refusal-floor', 'tollgate-redis', 'tollgate-memory', 'nestjs-throttler'],
};

/** How each variant reads in the report. */
export const VARIANT_LABELS: Readonly<Record<Variant, string>> = {
  none: 'no limiter (baseline)',
  'refusal-floor': "Tollgate's 429, no limiter (floor)",
  'tollgate-redis': 'Tollgate, RedisStore',
  'tollgate-memory': 'Tollgate, MemoryStore',
  'express-rate-limit': 'express-rate-limit + rate-limit-redis',
  'rate-limiter-flexible': 'rate-limiter-flexible RateLimiterRedis',
  'fastify-rate-limit': '@fastify/rate-limit, Redis store',
  'koa-ratelimit': 'koa-ratelimit, Redis driver',
  'hono-rate-limiter': 'hono-rate-limiter, RedisStore',
  'nestjs-throttler': '@nestjs/throttler + throttler-storage-redis',
};

/** How a variant of a build reads in the report: the rows of the `--against` build say so. */
export function variantLabel(variant: Variant, build: Build): string {
  return build === 'against' ? `${VARIANT_LABELS[variant]} (against)` : VARIANT_LABELS[variant];
}

/** Whether the variant limits at all: not the baseline, nor the floor that refuses everyone. */
export function hasLimiter(variant: Variant): boolean {
  return variant !== 'none' && variant !== 'refusal-floor';
}

/** Tollgate's own limiters: the variants that `--against` runs a second time, from the other build. */
export function isTollgate(variant: Variant): boolean {
  return variant.startsWith('tollgate-');
}

/** The peers: other libraries on the same Redis, which Tollgate's Redis row is compared with. */
export function isPeer(variant: Variant): boolean {
  return hasLimiter(variant) && !isTollgate(variant);
}

/** Whether the variant keeps its counts in the bench's Redis. */
export function usesRedis(variant: Variant): boolean {
  return hasLimiter(variant) && variant !== 'tollgate-memory';
}

/**
 * Whether the variant runs the scenario: the baseline answers `ok` (ALLOW; DENY is compared with its runs
 * of ALLOW on one hot key), the floor refuses every request (DENY only), the limiters run everything.
 */
export function runsScenario(variant: Variant, scenario: Scenario): boolean {
  if (variant === 'none') return scenario.expect === 'allow';
  if (variant === 'refusal-floor') return scenario.expect === 'deny';
  return true;
}

/** What an app of the bench needs besides its framework and variant. */
export interface AppSettings {
  readonly scenario: Scenario;
  /** Puts this app's Redis keys apart from the other frameworks' in the same Redis. */
  readonly keyPrefix: string;
}

/** The client identity of a request, as every limiter of the bench reads it. */
export function clientOf(headers: Record<string, string | string[] | undefined>): string {
  const value = headers[CLIENT_HEADER];
  return (Array.isArray(value) ? value[0] : value) ?? 'anonymous';
}
