/** The Hono app on Bun: which routes are limited, by whom, and how hard. */
import { byApiKey, byIp, firstOf, rateLimit, type Store } from '@tollgate/hono';
import { Hono } from 'hono';
import { getConnInfo } from 'hono/bun';

/**
 * The API keys this demo issued. A real app looks a key up in its database (behind a cache: `verify` runs
 * on every request that carries a key) or checks its signature.
 */
const ISSUED_API_KEYS = new Set(['demo-key-1', 'demo-key-2']);

/** Only issued keys get a bucket of their own; any other key is charged to the client IP. */
const verify = (key: string) => ISSUED_API_KEYS.has(key);

/**
 * Builds the app for `Bun.serve({ fetch: app.fetch })`: Bun passes its server as the second argument,
 * which `getConnInfo` from `hono/bun` asks for the client's address. Every limiter gets the same `store`
 * and its own `name`.
 *
 * @example
 * Bun.serve({ port: 3005, fetch: createApp(new MemoryStore()).fetch });
 */
export function createApp(store: Store): Hono {
  const app = new Hono();

  // (d) Not limited: registered before the app-wide limiter, so it answers before the limiter runs.
  app.get('/health', (c) => c.json({ status: 'ok' }));

  // (a) Every route registered below: 20 requests a minute per client IP. Behind a proxy, add
  // `ip: (c) => c.req.header('x-real-ip')` (a header your proxy overwrites), or every client shares the
  // proxy's bucket.
  app.use(rateLimit({ name: 'site', limit: 20, window: '1m', store, getConnInfo }));

  app.get('/', (c) => c.text('Hello from Hono on Bun behind Tollgate\n'));

  // (b) The API: 5 requests a minute per issued API key, on top of the per-IP limit; requests without
  // one fall back to their IP, so inventing keys never escapes the per-IP limit.
  const perApiKey = rateLimit({
    name: 'api',
    limit: 5,
    window: '1m',
    key: firstOf(byApiKey({ verify }), byIp()),
    store,
    getConnInfo,
  });
  app.get('/api/widgets', perApiKey, (c) => c.json({ widgets: ['sprocket', 'flange'] }));

  // (c) Logins: 3 attempts a minute per IP. `c.get('rateLimit')` is the login limiter's info.
  app.post('/login', rateLimit({ name: 'login', limit: 3, window: '1m', store, getConnInfo }), (c) =>
    c.json({ signedIn: true, attemptsLeft: c.get('rateLimit')?.remaining }),
  );

  return app;
}
