/**
 * Reading a request shaped as Node.js's own (`headers`, `socket`) with the client IP a framework resolved
 * (`ip`): Express's `req`, Fastify's `request`, and NestJS on either. One reader for them all.
 */
import type { RequestAccess } from './request-keys.js';

/** What {@link nodeRequestAccess} reads of a request. */
export interface NodeShapedRequest {
  /** Node.js's request headers: lower-case names, a list for a repeated header. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The client IP as the framework resolved it, under its trust-proxy setting. */
  readonly ip?: string | undefined;
  readonly socket?: { readonly remoteAddress?: string | undefined } | undefined;
}

/**
 * How the core reads a Node-shaped request: `ip` as the framework resolved it (an empty one is none),
 * the socket's peer, a header's first value. `trustsEveryProxy` tells the framework's trust-proxy
 * setting apart, when it can be read (see {@link answersLeftmostForwarded}).
 *
 * @example
 * const access = nodeRequestAccess<Request>((req) => req.app?.get('trust proxy') === true);
 */
export function nodeRequestAccess<Req extends NodeShapedRequest>(
  trustsEveryProxy?: (request: Req) => boolean,
): RequestAccess<Req> {
  return {
    ip: (request) => request.ip || undefined,
    socketIp: (request) => request.socket?.remoteAddress,
    header(request, name) {
      const value = request.headers[name];
      return Array.isArray(value) ? value[0] : value;
    },
    ...(trustsEveryProxy === undefined ? {} : { trustsEveryProxy }),
  };
}

/** The `X-Forwarded-For` of a request from behind nine proxies: no deliberate setting trusts all of them. */
const NINE_PROXIES = Array.from({ length: 9 }, (_, i) => `198.51.100.${i + 1}`).join(', ');

/**
 * Whether a framework that keeps its trust-proxy setting to itself (Fastify) trusts every proxy: asked
 * for the IP of a made-up Node.js request from behind nine proxies, it answers the leftmost
 * `X-Forwarded-For` entry, which any client can write. `ipOf` resolves the IP of the Node.js request it
 * is given as the framework would; if it throws, the answer is `false`.
 *
 * @example
 * trustsEveryProxy: (request) =>
 *   answersLeftmostForwarded((raw) => Object.create(Object.getPrototypeOf(request), { raw: { value: raw } }).ip),
 */
export function answersLeftmostForwarded(ipOf: (raw: NodeShapedRequest) => string | undefined): boolean {
  try {
    // A fresh request each time: asked once per limiter, and the framework may cache on what it reads.
    const probe = { socket: { remoteAddress: '192.0.2.1' }, headers: { 'x-forwarded-for': NINE_PROXIES } };
    return ipOf(probe) === '198.51.100.1';
  } catch {
    return false;
  }
}
