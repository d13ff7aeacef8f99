/**
 * What a fragment of the fetch docs may use without declaring it (`<!-- snippet: fragment fetch -->`):
 * `@tollgate/fetch`, and the app's own things the docs take as given.
 */
import type { RedisStore } from '@tollgate/fetch';

export {
  concurrencyLimit,
  MemoryStore,
  RateLimitError,
  RedisStore,
  rateLimit,
  withConcurrencyLimit,
  withRateLimit,
} from '@tollgate/fetch';

/** The store every limiter shares. */
export declare const store: RedisStore;
/** The client address, as the platform gives it (the README's "The client address"). */
export declare function clientIp(request: Request): string | undefined;
/** The app's route handlers. */
export declare function handler(request: Request): Promise<Response>;
export declare function signIn(request: Request): Promise<Response>;
/** The app's own work behind those handlers. */
export declare function runSearch(query: URLSearchParams, remaining: number | undefined): Promise<unknown[]>;
export declare function exportStream(request: Request): Promise<ReadableStream<Uint8Array>>;
