/**
 * What a fragment of the NestJS docs may use without declaring it (`<!-- snippet: fragment nestjs -->`):
 * `@tollgate/nestjs`, and the app's own things the docs take as given.
 */

import type { CanActivate } from '@nestjs/common';
import type { RedisStore } from '@tollgate/nestjs';

export {
  byApiKey,
  byIp,
  byUser,
  concurrencyLimit,
  firstOf,
  RateLimit,
  RateLimitException,
  RedisStore,
  SkipRateLimit,
  TollgateGuard,
  TollgateLimiters,
  TollgateModule,
} from '@tollgate/nestjs';

/** The store every limiter shares. */
export declare const store: RedisStore;
/** The app's authentication guard: sets `req.user`. */
export declare class AuthGuard implements CanActivate {
  canActivate(): Promise<boolean>;
}
/** The app's lookup of the API keys it issued, behind a cache. */
export declare function isIssuedKey(key: string): Promise<boolean>;
