/** The app on Deno: which routes are limited, by whom, and how hard, with @tollgate/fetch. */
import { byApiKey, byIp, firstOf, rateLimit, type Store, withRateLimit } from '@tollgate/fetch';

/** What `Deno.serve` passes a handler: the request, and who sent it. */
type Handler = (request: Request, info: Deno.ServeHandlerInfo) => Response | Promise<Response>;

/**
 * The client's address: over TCP, `info.remoteAddr` is the peer's IP. Over a Unix socket there is none,
 * and such a request is refused with a ClientAddressError rather than limited in a bucket shared by all.
 */
const clientIp = (_request: Request, info: Deno.ServeHandlerInfo) =>
  'hostname' in info.remoteAddr ? info.remoteAddr.hostname : undefined;

/**
 * The API keys this demo issued. A real app looks a key up in its database (behind a cache: `verify` runs
 * on every request that carries a key) or checks its signature.
 */
const ISSUED_API_KEYS = new Set(['demo-key-1', 'demo-key-2']);

/** Only issued keys get a bucket of their own; any other key is charged to the client IP. */
const verify = (key: string) => ISSUED_API_KEYS.has(key);

const hello: Handler = () => new Response('Hello from Deno behind Tollgate\n');
const widgets: Handler = () => Response.json({ widgets: ['sprocket', 'flange'] });
const signIn: Handler = () => Response.json({ signedIn: true });

/**
 * Builds the handler for `Deno.serve`. Every limiter gets the same `store` and its own `name`.
 *
 * @example
 * Deno.serve({ port: 3006 }, createApp(new MemoryStore()));
 */
export function createApp(store: Store): Handler {
  // (a) Every route but /health: 20 requests a minute per client IP, checked first.
  const site = rateLimit<[Deno.ServeHandlerInfo]>({
    name: 'site',
    limit: 20,
    window: '1m',
    store,
    ip: clientIp,
  });

  const routes = new Map<string, Handler>([
    ['GET /', hello],
    // (b) The API: 5 requests a minute per issued API key, on top of the per-IP limit; requests without
    // one fall back to their IP, so inventing keys never escapes the per-IP limit.
    [
      'GET /api/widgets',
      withRateLimit(widgets, {
        name: 'api',
        limit: 5,
        window: '1m',
        key: firstOf(byApiKey({ verify }), byIp()),
        store,
        ip: clientIp,
      }),
    ],
    // (c) Logins: 3 attempts a minute per IP.
    ['POST /login', withRateLimit(signIn, { name: 'login', limit: 3, window: '1m', store, ip: clientIp })],
  ]);

  return async function app(request, info) {
    const { pathname } = new URL(request.url);
    // (d) Not limited: load balancers' health checks must not use up anyone's allowance.
    if (pathname === '/health') return Response.json({ status: 'ok' });
    const result = await site.check(request, info);
    if (!result.allowed) return result.response;
    const route = routes.get(`${request.method} ${pathname}`);
    // The route's limiter adds its headers to the site's: one RateLimit field lists both policies.
    return result.apply(route ? await route(request, info) : new Response('Not Found\n', { status: 404 }));
  };
}
