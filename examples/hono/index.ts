/** Starts the Hono example on @hono/node-server, on PORT (default 3003). */
import { getRequestListener } from '@hono/node-server';
import { serveRequestListener } from '@tollgate/example-support/serve';
import { openStore } from '@tollgate/example-support/store';
import { createApp } from './app.js';

const shared = openStore(process.env.REDIS_URL, 'tollgate:example-hono:');
await serveRequestListener(
  'Hono',
  Number(process.env.PORT ?? 3003),
  shared,
  getRequestListener(createApp(shared.store).fetch),
);
