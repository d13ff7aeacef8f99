/**
 * What a fragment of the Hono docs may use without declaring it (`<!-- snippet: fragment hono -->`):
 * `@tollgate/hono`, Node.js's `getConnInfo`, and the app's own things the docs take as given.
 */
import type { RedisStore } from '@tollgate/hono';
import type { Handler, Hono } from 'hono';

export { getConnInfo } from '@hono/node-server/conninfo';
export {
  byApiKey,
  byIp,
  byUser,
  concurrencyLimit,
  firstOf,
  MemoryStore,
  RateLimitError,
  RedisStore,
  rateLimit,
} from '@tollgate/hono';

/** The app. */
export declare const app: Hono;
/** The store every limiter shares. */
export declare const store: RedisStore;
/** The app's route handlers. */
export declare const login: Handler;
export declare const exportReport: Handler;
