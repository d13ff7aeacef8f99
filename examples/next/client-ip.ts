/**
 * The client IP of a request to this app, which is served by `next start` behind one reverse proxy of your
 * own (nginx, Caddy, a load balancer) that appends the address it sees to X-Forwarded-For and is the only
 * way in: `pnpm start` listens on 127.0.0.1, for a proxy on the same host.
 *
 * Next.js leaves an X-Forwarded-For that arrives as it is and writes the caller's address only into a
 * request that has none. So behind the proxy the last entry is the one the proxy wrote; what a client
 * wrote before it is ignored. Reached with no proxy in front (a curl on this host), the last entry is the
 * caller's own address, or whatever the caller wrote: exposed that way, no header can be trusted.
 * On Vercel, and behind more than one proxy, see the @tollgate/fetch README, "Next.js: the client address".
 */

/** The X-Forwarded-For entry the proxy in front of `next start` appended: the last one. */
export function clientIp(request: Request): string | undefined {
  return request.headers.get('x-forwarded-for')?.split(',').at(-1)?.trim() || undefined;
}
