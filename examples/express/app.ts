/** The Express app: which routes are limited, by whom, and how hard. */
import { byApiKey, byIp, firstOf, rateLimit, type Store } from '@tollgate/express';
import express, { type Express } from 'express';

/**
 * The API keys this demo issued. A real app looks a key up in its database (behind a cache: `verify` runs
 * on every request that carries a key) or checks its signature.
 */
const ISSUED_API_KEYS = new Set(['demo-key-1', 'demo-key-2']);

/** Only issued keys get a bucket of their own; any other key is charged to the client IP. */
const verify = (key: string) => ISSUED_API_KEYS.has(key);

/**
 * Builds the app. Every limiter gets the same `store` and its own `name`, so its buckets are its own and
 * keep their place in Redis when limiters are added later.
 *
 * @example
 * createApp(new MemoryStore()).listen(3000);
 */
export function createApp(store: Store): Express {
  const app = express();

  // (d) Not limited: registered before the app-wide limiter, so its requests never reach it. Health
  // checks come from load balancers every few seconds and must not use up anyone's allowance.
  app.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });

  // (a) Every route registered below: 20 requests a minute per client IP. Behind a proxy, set
  // app.set('trust proxy', …) so req.ip, and with it the key, is the client's address, not the proxy's.
  app.use(rateLimit({ name: 'site', limit: 20, window: '1m', store }));

  app.get('/', (_req, res) => {
    res.send('Hello from Express behind Tollgate\n');
  });

  // (b) The API: 5 requests a minute per API key, on top of the per-IP limit above. Requests without a
  // key, or with a made-up one, fall back to their IP: keyless callers do not all share one bucket, and
  // inventing keys never escapes the per-IP limit.
  const perApiKey = rateLimit({
    name: 'api',
    limit: 5,
    window: '1m',
    key: firstOf(byApiKey({ verify }), byIp()),
    store,
  });
  app.get('/api/widgets', perApiKey, (_req, res) => {
    res.json({ widgets: ['sprocket', 'flange'] });
  });

  // (c) Logins: 3 attempts a minute per IP, far below the app-wide rate, so passwords cannot be guessed
  // at the speed pages are read.
  app.post('/login', rateLimit({ name: 'login', limit: 3, window: '1m', store }), (_req, res) => {
    res.json({ signedIn: true });
  });

  return app;
}
