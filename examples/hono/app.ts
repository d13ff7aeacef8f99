/** The Hono app: which routes are limited, by whom, and how hard. */
import { getConnInfo } from '@hono/node-server/conninfo';
import { byApiKey, byIp, firstOf, rateLimit, type Store } from '@tollgate/hono';
import { Hono } from 'hono';

/**
 * The API keys this demo issued. A real app looks a key up in its database (behind a cache: `verify` runs
 * on every request that carries a key) or checks its signature.
 */
const ISSUED_API_KEYS = new Set(['demo-key-1', 'demo-key-2']);

/** Only issued keys get a bucket of their own; any other key is charged to the client IP. */
const verify = (key: string) => ISSUED_API_KEYS.has(key);

/**
 * Builds the app, for @hono/node-server: the client IP is the socket's, from its `getConnInfo` (on Bun,
 * Deno or Workers, import `getConnInfo` from `hono/bun`, `hono/deno`, `hono/cloudflare-workers`). Every
 * limiter gets the same `store` and its own `name`, so its buckets are its own and keep their place in
 * Redis when limiters are added later.
 *
 * @example
 * serve({ fetch: createApp(new MemoryStore()).fetch, port: 3003 });
 */
export function createApp(store: Store): Hono {
  const app = new Hono();

  // (d) Not limited: registered before the app-wide limiter, so its requests are answered before it
  // runs. Health checks come from load balancers every few seconds and must not use up anyone's allowance.
  app.get('/health', (c) => c.json({ status: 'ok' }));

  // (a) Every route registered below: 20 requests a minute per client IP. Behind a proxy, add
  // `ip: (c) => c.req.header('x-real-ip')` (a header your proxy overwrites), or every client shares the
  // proxy's bucket.
  app.use(rateLimit({ name: 'site', limit: 20, window: '1m', store, getConnInfo }));

  app.get('/', (c) => c.text('Hello from Hono behind Tollgate\n'));

  // (b) The API: 5 requests a minute per API key, on top of the per-IP limit above. Requests without a
  // key, or with a made-up one, fall back to their IP: keyless callers do not all share one bucket, and
  // inventing keys never escapes the per-IP limit.
  const perApiKey = rateLimit({
    name: 'api',
    limit: 5,
    window: '1m',
    key: firstOf(byApiKey({ verify }), byIp()),
    store,
    getConnInfo,
  });
  app.get('/api/widgets', perApiKey, (c) => c.json({ widgets: ['sprocket', 'flange'] }));

  // (c) Logins: 3 attempts a minute per IP, far below the app-wide rate, so passwords cannot be guessed
  // at the speed pages are read. `c.get('rateLimit')` is the login limiter's info.
  app.post('/login', rateLimit({ name: 'login', limit: 3, window: '1m', store, getConnInfo }), (c) =>
    c.json({ signedIn: true, attemptsLeft: c.get('rateLimit')?.remaining }),
  );

  return app;
}
