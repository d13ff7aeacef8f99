/**
 * The Hono worker the workerd suite serves: work on Redis after the response (a refund, a concurrency
 * slot's release), with limiters built per request around a store of the request's own.
 */
import { concurrencyLimit, rateLimit, type Store } from '@tollgate/hono';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { storeOnIoredis } from './redis-per-request.js';

type Env = { Bindings: { readonly REDIS_URL: string } };

const ip = (c: Context) => c.req.header('cf-connecting-ip');

/** The middleware `build` makes, on a store of this request's own. */
const perRequest =
  (build: (store: Store) => MiddlewareHandler): MiddlewareHandler =>
  async (c, next) =>
    build(await storeOnIoredis((c.env as Env['Bindings']).REDIS_URL))(c, next);

const app = new Hono<Env>();

app.get(
  '/refund',
  perRequest((store) =>
    rateLimit({ name: 'hono-refund', limit: 2, window: '1m', ip, store, skipFailedRequests: true }),
  ),
  (c) => c.text('failed\n', 500),
);
app.get(
  '/slot',
  perRequest((store) => concurrencyLimit({ name: 'hono-slot', limit: 1, ip, store })),
  (c) => c.text('hello\n'),
);

export default app;
