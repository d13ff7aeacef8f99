/** Starts the Koa example on PORT (default 3002). */
import { serveRequestListener } from '@tollgate/example-support/serve';
import { openStore } from '@tollgate/example-support/store';
import { createApp } from './app.js';

const shared = openStore(process.env.REDIS_URL, 'tollgate:example-koa:');
await serveRequestListener(
  'Koa',
  Number(process.env.PORT ?? 3002),
  shared,
  createApp(shared.store).callback(),
);
