/** Who is limited: key functions that turn a request into an identity, the same in every framework. */
import { checkHmacKey, hashIdentity } from '../../support/identity.js';
import { TollgateOptionError } from '../../support/option-error.js';
import { ownOptions } from '../../support/value-checks.js';
import { addressIdentity, DEFAULT_IPV6_SUBNET } from './client-ip.js';

/**
 * How the core reads a framework's request. Each adapter provides one, built once; key functions use it
 * so they work unchanged in Express, Fastify and Koa.
 */
export interface RequestAccess<Req> {
  /** The client IP as the framework resolved it through its own trusted-proxy setting. */
  ip(request: Req): string | undefined;
  /** The address of the peer socket (the proxy, when there is one). */
  socketIp(request: Req): string | undefined;
  /** The first value of a request header; `name` is lower case. */
  header(request: Req, name: string): string | undefined;
  /**
   * Whether the framework takes the client IP from `X-Forwarded-For` whoever sent it (Express
   * `trust proxy` true, Fastify `trustProxy: true`, Koa `app.proxy` without `maxIpsCount`), so that any
   * client can choose its IP. Asked once, for `TOLLGATE_PERMISSIVE_TRUST_PROXY`. Optional.
   */
  trustsEveryProxy?(request: Req): boolean;
}

/**
 * Turns a request into the identity it is limited by. Return `undefined` when the function does not
 * apply (no user, no API key), so {@link firstOf} can try the next. May be async.
 *
 * @example
 * const byTenant: KeyFunction<Request> = (req) => req.headers['x-tenant-id'] as string | undefined;
 */
export type KeyFunction<Req> = (
  request: Req,
  access: RequestAccess<Req>,
) => string | undefined | Promise<string | undefined>;

/** Options of {@link byIp}. */
export interface ByIpOptions {
  /**
   * IPv6 clients are grouped by this prefix length, since one user usually holds a whole subnet.
   * `false` (or 128) keys each address alone. Default: `56`.
   */
  ipv6Subnet?: number | false;
}

/**
 * Limits by client IP: the default. The IP is the framework's (`req.ip`, `request.ip`, `ctx.ip`), so it
 * follows `trust proxy` / `trustProxy` / `app.proxy`; `X-Forwarded-For` is never read here. A port or
 * brackets a proxy forwarded are dropped, and an IPv4 client written as IPv6 is that client:
 * `::ffff:1.2.3.4` and `64:ff9b::1.2.3.4` (NAT64) are `ip:1.2.3.4`. An address that is not an IP (a proxy
 * forwarding `unknown`) gets a bucket of its own, `ip-unparsed:sha256:…` (see `addressIdentity`), never
 * one shared with other such clients, and the limiter warns of it once (`TOLLGATE_UNPARSED_IP`);
 * `undefined` only when the framework gave no address at all.
 *
 * @example
 * rateLimit({ limit: 100, window: '1m', key: byIp({ ipv6Subnet: 64 }) });
 */
export function byIp<Req = unknown>(options: ByIpOptions = {}): KeyFunction<Req> {
  const { ipv6Subnet = DEFAULT_IPV6_SUBNET } = ownOptions(options);
  if (ipv6Subnet !== false && (!Number.isInteger(ipv6Subnet) || ipv6Subnet < 1 || ipv6Subnet > 128)) {
    throw new TollgateOptionError(
      `byIp ipv6Subnet must be a whole number from 1 to 128, or false; got ${String(ipv6Subnet)}`,
    );
  }
  return function byIp(request, access) {
    return addressIdentity(access.ip(request), ipv6Subnet);
  };
}

/**
 * Says whether an API key is real: `true` for a key the app issued and has not revoked, `false` (or
 * `undefined`) for any other. Gets the key as the client sent it and the request. May be async. Runs on
 * every request that carries a key, so keep it cheap (a cache, or keys whose signature can be checked
 * without a lookup).
 */
export type VerifyApiKey<Req> = (
  key: string,
  request: Req,
) => boolean | undefined | null | Promise<boolean | undefined | null>;

/** Options of {@link byApiKey}. */
export interface ByApiKeyOptions<Req = unknown> {
  /**
   * Required. Only a key for which this returns `true` gets a bucket of its own; for any other key
   * `byApiKey` returns `undefined`, so `firstOf(byApiKey({ verify }), byIp())` charges the request to
   * the client IP, and a made-up key never escapes the IP's limit. When a gateway in front of the app
   * already rejects unknown keys, say so with `verify: () => true`.
   */
  verify: VerifyApiKey<Req>;
  /**
   * The header that carries the key. With `'authorization'`, only the `Bearer` scheme's token is used.
   * Default: `'x-api-key'`.
   */
  header?: string;
  /**
   * A secret of the app's, to hash keys with HMAC-SHA-256 instead of plain SHA-256 (see `hashIdentity`):
   * use it when keys may be guessable. At least 16 bytes. Default: none.
   */
  hmacKey?: string | Uint8Array;
}

/**
 * Limits by API key, for keys that `verify` accepts; returns `undefined` for a request without a key or
 * with a key `verify` refuses, so the next key function of a {@link firstOf} applies. The key is hashed
 * (SHA-256, or HMAC-SHA-256 with `hmacKey`) before it goes anywhere: it never reaches the store or a log
 * in plain text, and a refused key is not hashed at all.
 *
 * @example
 * const verify = async (key: string) => (await db.apiKeys.findActive(key)) !== null;
 * rateLimit({ limit: 1000, window: '1h', key: firstOf(byApiKey({ verify }), byIp()) });
 */
export function byApiKey<Req = unknown>(options: ByApiKeyOptions<Req>): KeyFunction<Req> {
  const { header = 'x-api-key', verify, hmacKey } = ownOptions(options ?? ({} as ByApiKeyOptions<Req>));
  if (typeof verify !== 'function') {
    throw new TollgateOptionError(
      'byApiKey needs { verify }: a function that returns true for keys the app issued. Without it every ' +
        'made-up key would get a bucket of its own. If a gateway in front already rejects unknown keys, ' +
        'pass verify: () => true',
    );
  }
  if (typeof header !== 'string' || !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(header)) {
    throw new TollgateOptionError(`byApiKey header must be a header name; got ${String(header)}`);
  }
  if (hmacKey !== undefined) checkHmacKey(hmacKey, 'byApiKey hmacKey');
  const hashOptions = hmacKey === undefined ? {} : { hmacKey };
  const name = header.toLowerCase();
  const bearer = name === 'authorization';
  return async function byApiKey(request, access) {
    const value = access.header(request, name)?.trim();
    const secret = bearer ? /^Bearer\s+(\S+)$/i.exec(value ?? '')?.[1] : value;
    if (!secret) return undefined;
    const verdict: unknown = await verify(secret, request);
    if (verdict !== true && verdict !== false && verdict !== undefined && verdict !== null) {
      // An app bug (returning a user object, say): fail loudly rather than guess either way.
      throw new TollgateOptionError(`byApiKey verify must return true or false; got ${typeof verdict}`);
    }
    return verdict === true ? `key:${hashIdentity(secret, hashOptions)}` : undefined;
  };
}

/**
 * Limits by user: `userOf` returns the user's id, or `undefined` for anonymous requests.
 *
 * @example
 * byUser((req) => req.user?.id)            // Express, Fastify
 * byUser((ctx) => ctx.state.user?.id)      // Koa
 */
export function byUser<Req = unknown>(
  userOf: (request: Req) => string | number | undefined | null | Promise<string | number | undefined | null>,
): KeyFunction<Req> {
  if (typeof userOf !== 'function')
    throw new TollgateOptionError('byUser needs a function returning the user id');
  return async function byUser(request) {
    const id = await userOf(request);
    return id === undefined || id === null || id === '' ? undefined : `user:${id}`;
  };
}

/**
 * The first key function that applies: e.g. the user when signed in, else the API key, else the IP.
 *
 * @example
 * firstOf(byUser((req) => req.user?.id), byApiKey({ verify }), byIp())
 */
export function firstOf<Req = unknown>(...keys: KeyFunction<Req>[]): KeyFunction<Req> {
  if (keys.length === 0 || keys.some((key) => typeof key !== 'function')) {
    throw new TollgateOptionError('firstOf needs one or more key functions');
  }
  return async function firstOf(request, access) {
    for (const key of keys) {
      const identity = await key(request, access);
      if (identity !== undefined && identity !== '') return identity;
    }
    return undefined;
  };
}
