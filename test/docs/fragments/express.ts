/**
 * What a fragment of the Express docs may use without declaring it (`<!-- snippet: fragment express -->`):
 * `@tollgate/express`, and the app's own things the docs take as given.
 */
import type { RedisStore } from '@tollgate/express';
import type express from 'express';
import type { Request, RequestHandler } from 'express';
import type { Redis } from 'ioredis';

export {
  byApiKey,
  byIp,
  byUser,
  concurrencyLimit,
  type ExpressRateLimitOptions,
  firstOf,
  MemoryStore,
  RateLimitError,
  RedisStore,
  rateLimit,
} from '@tollgate/express';

/** The app. */
export declare const app: express.Express;
/** The app's ioredis client, which fails fast, and the store every limiter shares on it. */
export declare const redis: Redis;
export declare const store: RedisStore;
/** The app's route handlers and middleware. */
export declare const login: RequestHandler;
export declare const completions: RequestHandler;
export declare function passwordIsRight(req: Request): Promise<boolean>;
/** The app's lookup of the API keys it issued, behind a cache. */
export declare function isIssuedKey(key: string): Promise<boolean>;
/** A StatsD-style metrics client. */
export declare const metrics: { increment(name: string, tags: Record<string, string>): void };
