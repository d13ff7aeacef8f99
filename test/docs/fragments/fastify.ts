/**
 * What a fragment of the Fastify docs may use without declaring it (`<!-- snippet: fragment fastify -->`):
 * `@tollgate/fastify`, and the app's own things the docs take as given.
 */
import type { RedisStore } from '@tollgate/fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';

export {
  byApiKey,
  byIp,
  byUser,
  firstOf,
  MemoryStore,
  RateLimitError,
  RedisStore,
  tollgate,
} from '@tollgate/fastify';

/** The app, with the `tollgate` plugin registered where a fragment calls `app.rateLimit()`. */
export declare const app: FastifyInstance;
/** The store every limiter shares. */
export declare const store: RedisStore;
/** The app's route handlers and hooks. */
export declare const login: RouteHandlerMethod;
export declare const search: RouteHandlerMethod;
export declare const health: RouteHandlerMethod;
export declare const exportAll: RouteHandlerMethod;
export declare const exportsOfUser: RouteHandlerMethod;
/** Authentication: sets `request.user`. */
export declare function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void>;
export declare function requireAdmin(request: FastifyRequest, reply: FastifyReply): Promise<void>;
export declare function passwordIsRight(request: FastifyRequest): Promise<boolean>;
