/**
 * The client IP of a request to a Next.js route handler. A `Request` carries no address, so it comes
 * from a header, and only a header your platform or proxy writes itself can be trusted:
 * - on Vercel, `x-real-ip` (Vercel overwrites the forwarding headers; a client cannot set them);
 * - behind one proxy of your own that appends to `X-Forwarded-For` (nginx's
 *   `$proxy_add_x_forwarded_for`), its last entry, the address that proxy saw;
 * - `next start` with no proxy in front: none. Next.js copies the socket's address into
 *   `X-Forwarded-For` only when the request has none, so a client can write its own: put a proxy in
 *   front, or key requests by something else (`byUser`, `byApiKey`).
 */

/** Vercel's `x-real-ip`, else the last `X-Forwarded-For` entry (one trusted proxy, or Next's own). */
export function clientIp(request: Request): string | undefined {
  const real = request.headers.get('x-real-ip');
  if (real) return real;
  return request.headers.get('x-forwarded-for')?.split(',').at(-1)?.trim() || undefined;
}
