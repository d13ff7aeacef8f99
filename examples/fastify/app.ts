/** The Fastify app: which routes are limited, by whom, and how hard. */
import { byApiKey, byIp, firstOf, type Store, tollgate } from '@tollgate/fastify';
import Fastify, { type FastifyInstance } from 'fastify';

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
 * const app = await createApp(new MemoryStore());
 * await app.listen({ port: 3001 });
 */
export async function createApp(store: Store): Promise<FastifyInstance> {
  // Tollgate reports warnings through the app's logger (through console while Fastify's is off).
  const app = Fastify({ logger: { level: 'warn' } });

  // (a) Every route: 20 requests a minute per client IP, unless its `config.rateLimit` says otherwise.
  // Behind a proxy, pass Fastify `trustProxy` so request.ip, and with it the key, is the client's address.
  await app.register(tollgate, { name: 'site', limit: 20, window: '1m', store });

  app.get('/', async () => 'Hello from Fastify behind Tollgate\n');

  // (b) The API: 5 requests a minute per API key. A route's own limit replaces the app-wide one (the
  // store is inherited, the name is not). Requests without a key, or with a made-up one, fall back to
  // their IP, so keyless callers do not share one bucket and inventing keys never escapes the IP's limit.
  app.get(
    '/api/widgets',
    {
      config: {
        rateLimit: { name: 'api', limit: 5, window: '1m', key: firstOf(byApiKey({ verify }), byIp()) },
      },
    },
    async () => ({ widgets: ['sprocket', 'flange'] }),
  );

  // (c) Logins: 3 attempts a minute per IP, far below the app-wide rate, so passwords cannot be guessed
  // at the speed pages are read.
  app.post('/login', { config: { rateLimit: { name: 'login', limit: 3, window: '1m' } } }, async () => ({
    signedIn: true,
  }));

  // (d) Not limited: health checks come from load balancers every few seconds and must not use up
  // anyone's allowance.
  app.get('/health', { config: { rateLimit: false } }, async () => ({ status: 'ok' }));

  return app;
}
