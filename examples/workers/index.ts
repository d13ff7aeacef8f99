/**
 * Tollgate in a Hono app on Cloudflare Workers, served by workerd: `pnpm start`, then
 * http://localhost:8787. Every route but /health is limited in this isolate's memory; /api/* is limited on
 * Redis too, over TCP, when the `REDIS_URL` var is set (wrangler.jsonc), else in memory.
 */
import { ClientAddressError, type RateLimitMiddleware, RedisStore, rateLimit } from '@tollgate/hono';
import { type Context, Hono } from 'hono';
import { Redis } from 'ioredis';

type Env = { Bindings: { REDIS_URL?: string } };

/** Cloudflare sets CF-Connecting-IP to the client's address, and overwrites one a client sent. */
const ip = (c: Context) => c.req.header('cf-connecting-ip');

/** The API's limit, on Redis or in memory. */
const API_LIMIT = { name: 'api', limit: 10, window: '1m', ip } as const;

const app = new Hono<Env>();

app.get('/health', (c) => c.json({ status: 'ok' }));

// In this isolate's memory, built once: every isolate counts on its own, from zero when it starts.
app.use(rateLimit({ name: 'site', limit: 60, window: '1m', ip }));

const apiInMemory = rateLimit(API_LIMIT);
app.use('/api/*', async (c, next) => {
  const url = c.env.REDIS_URL;
  const client = url === undefined ? undefined : await connect(url);
  return client === undefined ? apiInMemory(c, next) : apiOnRedis(client)(c, next);
});

// On Cloudflare every request has the header. Under bare workerd, send it as Cloudflare would:
// curl -H 'CF-Connecting-IP: 203.0.113.7' localhost:8787/api/quote
app.onError((error, c) =>
  error instanceof ClientAddressError
    ? c.text('No CF-Connecting-IP: this Worker runs behind Cloudflare, which sets it.\n', 400)
    : c.text('Internal Server Error\n', 500),
);

app.get('/', (c) => c.text(`hello: ${c.get('rateLimit')?.remaining} left this minute\n`));
app.get('/api/quote', (c) =>
  c.json({ quote: 'Measure twice, cut once.', remaining: c.get('rateLimit')?.remaining }),
);

/**
 * A client of this request's own, connected, or `undefined` when Redis cannot be reached. workerd ties a
 * socket to the request that opened it: a client kept for later requests would hang them. The runtime
 * closes the socket once the request is done. With no ready check and RESP2, the check is the only
 * command the request sends.
 */
async function connect(url: string): Promise<Redis | undefined> {
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    enableReadyCheck: false,
    protocol: 2,
    connectTimeout: 2_000,
    retryStrategy: () => null, // nothing later to reconnect for
  });
  client.on('error', () => {}); // a failed connect is answered below
  try {
    await client.connect();
    return client;
  } catch (error) {
    console.warn(`Redis unreachable, /api limited in memory: ${String(error)}`);
    return undefined;
  }
}

/** The API's limiter on Redis, built for one request around its client; its name makes them one limit. */
function apiOnRedis(client: Redis): RateLimitMiddleware {
  return rateLimit({ ...API_LIMIT, store: new RedisStore({ client }) });
}

export default app;
