/** Starts the Koa example on PORT (default 3002). */
import type { Server } from 'node:http';
import { serve } from '@tollgate/example-support/serve';
import { openStore } from '@tollgate/example-support/store';
import { createApp } from './app.js';

const port = Number(process.env.PORT ?? 3002);
const shared = openStore(process.env.REDIS_URL, 'tollgate:example-koa:');
const app = createApp(shared.store);
let server: Server | undefined;

await serve({
  framework: 'Koa',
  port,
  shared,
  listen: () =>
    new Promise((resolve, reject) => {
      server = app.listen(port, '127.0.0.1', () => resolve()).once('error', reject);
    }),
  close: () => new Promise((resolve) => (server ? server.close(() => resolve()) : resolve())),
});
