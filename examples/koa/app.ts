/** The Koa app: which routes are limited, by whom, and how hard. */
import Router from '@koa/router';
import { byApiKey, byIp, firstOf, rateLimit, type Store } from '@tollgate/koa';
import Koa from 'koa';

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
 * createApp(new MemoryStore()).listen(3002);
 */
export function createApp(store: Store): Koa {
  const app = new Koa();

  // (d) Not limited: a router mounted before the app-wide limiter answers its routes before the limiter
  // runs. Health checks come from load balancers every few seconds and must not use up anyone's allowance.
  const unlimited = new Router();
  unlimited.get('/health', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  app.use(unlimited.routes());

  // (a) Everything mounted below: 20 requests a minute per client IP. Behind a proxy, set
  // app.proxy = true so ctx.ip, and with it the key, is the client's address, not the proxy's.
  app.use(rateLimit({ name: 'site', limit: 20, window: '1m', store }));

  const router = new Router();
  router.get('/', (ctx) => {
    ctx.body = 'Hello from Koa behind Tollgate\n';
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
  router.get('/api/widgets', perApiKey, (ctx) => {
    ctx.body = { widgets: ['sprocket', 'flange'] };
  });

  // (c) Logins: 3 attempts a minute per IP, far below the app-wide rate, so passwords cannot be guessed
  // at the speed pages are read.
  router.post('/login', rateLimit({ name: 'login', limit: 3, window: '1m', store }), (ctx) => {
    ctx.body = { signedIn: true };
  });

  app.use(router.routes()).use(router.allowedMethods());
  return app;
}
