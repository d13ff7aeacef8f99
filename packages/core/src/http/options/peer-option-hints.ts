/**
 * Options of the rate limiters people move from (express-rate-limit, express-slow-down,
 * @fastify/rate-limit, koa-ratelimit, rate-limiter-flexible, @nestjs/throttler), with what to write
 * instead, or a plain "not supported" where Tollgate has none.
 */
import type { NameHint } from '../../support/value-checks.js';

const KOA = 'koa-ratelimit';
const FLEXIBLE = 'rate-limiter-flexible';

const KEY = 'key (see byIp, byApiKey, byUser)';
const HEADERS = "headers ('draft-11', 'draft-10', 'draft-7', 'draft-6' or false)";
const REDIS_STORE = 'store: new RedisStore({ client })';
const NAMESPACE = "name (this limiter's namespace in the store)";
const ALLOW = 'allowList (client IPs and identities, or a function)';
const ON_EXCEEDED = 'onExceeded (told of each refused request), or handler (answers it)';
const FAIL_OPEN =
  "onStoreError: 'allow' (the default, 'insurance', limits per process while the store fails)";
const INSURANCE =
  "onStoreError: 'insurance' (the default: the same policies in this process's memory while the store fails; insurance: { instances } divides them among servers)";
const DENY_CACHE =
  'denyCache (on by default in front of a RedisStore: a client the store told to wait is answered in process until the wait is over)';
const BAN = 'ban: { after, duration } (after refusals in a row, refused for duration)';
const EVENLY =
  'delay: { maxWait } with burst: 1 (past the limit a request waits for its turn, and turns come one every window / limit; see docs/waiting.md)';
const SLOW_DOWN =
  "delay: { maxWait } with limit and window: past the limit, a request waits for its turn at the limit's rate instead of a 429 (see docs/migrating-from-express-slow-down.md)";

const notSupported = (from: string, unsupported: string): NameHint => ({ from, unsupported });

/**
 * Other limiters' option names, with the hint an "unknown option" error gives. A name Tollgate also uses
 * (`limit`, `store`, `skip`, `message`, `handler`, `legacyHeaders`, `statusCode`, `allowList`,
 * `skipFailedRequests`, `onExceeded`, `addHeaders`, …) is an option of ours and not listed.
 */
export const PEER_OPTIONS: ReadonlyMap<string, NameHint> = new Map<string, NameHint>([
  ['windowMs', { use: "window (ms or '15m')" }],
  ['ttl', { use: "window (ms or '1m'; @nestjs/throttler's ttl is in ms)" }],
  ['throttlers', { use: 'policies (one limiter, several policies), or one @RateLimit per named throttler' }],
  ['getTracker', { use: KEY }],
  ['generateKey', { use: `${KEY}, and name for the namespace` }],
  ['ignoreUserAgents', { use: "skip: (req) => /bot/i.test(req.headers['user-agent'] ?? '')" }],
  ['setHeaders', { use: HEADERS }],
  ['timeWindow', { use: "window (ms or '1m')" }],
  [
    'duration',
    {
      use: "window, in ms or as '1m' (koa-ratelimit's duration is in ms, rate-limiter-flexible's in seconds)",
    },
  ],
  ['max', { use: 'limit' }],
  ['points', { use: 'limit' }],
  ['keyGenerator', { use: KEY }],
  ['id', { use: KEY }],
  ['ipv6Subnet', { use: 'key: byIp({ ipv6Subnet })' }],
  ['standardHeaders', { use: HEADERS }],
  ['enableDraftSpec', { use: HEADERS }],
  ['draft_polli_ratelimit_headers', { use: HEADERS }],
  ['disableHeader', { use: 'headers: false (X-RateLimit-* are sent only with legacyHeaders: true)' }],
  ['errorMessage', { use: 'message' }],
  ['status', { use: 'statusCode' }],
  ['errorResponseBuilder', { use: 'message: (request, info) => body, or handler' }],
  ['onLimitReached', { use: ON_EXCEEDED }],
  ['onLimited', { use: ON_EXCEEDED }],
  ['throw', { use: 'throwOnLimit' }],
  ['allowlist', { use: ALLOW }],
  ['whitelist', { use: ALLOW }],
  ['skipOnError', { use: FAIL_OPEN }],
  ['passOnStoreError', { use: FAIL_OPEN }],
  ['redis', { use: REDIS_STORE }],
  ['db', { use: `${REDIS_STORE}, or a MemoryStore` }],
  ['storeClient', { use: REDIS_STORE }],
  ['useRedisPackage', { use: `${REDIS_STORE} (node-redis clients are recognised)` }],
  [
    'rejectIfRedisNotReady',
    {
      use: 'onStoreError (RedisStore sends no check while its client is not ready: the check takes onStoreError at once)',
    },
  ],
  ['insuranceLimiter', { use: INSURANCE }],
  ['inMemoryBlockOnConsumed', { use: DENY_CACHE }],
  ['timeoutMs', { use: "timeout (ms or '1s')" }],
  ['driver', { use: 'store: a MemoryStore (the default) or a RedisStore' }],
  ['storeType', { use: 'store: a MemoryStore (the default) or a RedisStore' }],
  ['cache', { use: 'store: new MemoryStore({ maxKeys })' }],
  ['nameSpace', { use: `${NAMESPACE}, or RedisStore's prefix` }],
  ['namespace', { use: `${NAMESPACE}, or RedisStore's prefix` }],
  ['keyPrefix', { use: `${NAMESPACE}, or RedisStore's prefix` }],
  ['groupId', { use: `${NAMESPACE}: limiters with one name and store share buckets` }],
  ['identifier', { use: 'policies: [{ limit, window, name }] (a policy name names it in headers)' }],
  ['validate', { use: 'warnings (false, or { [code]: false })' }],
  ['logLevel', { use: 'logger' }],
  ['onBanReach', { use: `onExceeded (a banned request's info.decision.reason is 'banned')` }],
  ['blacklist', notSupported(KOA, 'refuse such requests in a middleware before the limiter')],
  ['blockDuration', { use: `${BAN}; blockDuration is { after: 1, duration }` }],
  ['blockOnConsumed', { use: `${BAN}; blockOnConsumed is { after: 1, duration }` }],
  [
    'inMemoryBlockDuration',
    notSupported(
      FLEXIBLE,
      'the deny cache (denyCache) answers in process exactly as long as the wait, never longer',
    ),
  ],
  ['execEvenly', { use: EVENLY }],
  ['execEvenlyMinDelayMs', { use: EVENLY }],
  ['delayAfter', { use: SLOW_DOWN }],
  ['delayMs', { use: SLOW_DOWN }],
  ['maxDelayMs', { use: SLOW_DOWN }],
]);
