/**
 * What a fragment of the Koa docs may use without declaring it (`<!-- snippet: fragment koa -->`):
 * `@tollgate/koa`, and the app's own things the docs take as given.
 */
import type Router from '@koa/router';
import type { RedisStore } from '@tollgate/koa';
import type Koa from 'koa';
import type { Context, Middleware } from 'koa';

export {
  byApiKey,
  byIp,
  byUser,
  firstOf,
  MemoryStore,
  RateLimitError,
  RedisStore,
  rateLimit,
} from '@tollgate/koa';

/** The app, and a @koa/router router mounted on it. */
export declare const app: Koa;
export declare const router: Router;
/** The store every limiter shares. */
export declare const store: RedisStore;
/** The app's route handlers and middleware. */
export declare const login: Middleware;
export declare const requireAdmin: Middleware;
export declare function passwordIsRight(ctx: Context): Promise<boolean>;
