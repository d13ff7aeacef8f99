/** Starts the Express example on PORT (default 3000). */
import type { Server } from 'node:http';
import { serve } from '@tollgate/example-support/serve';
import { openStore } from '@tollgate/example-support/store';
import { createApp } from './app.js';

const port = Number(process.env.PORT ?? 3000);
const shared = openStore(process.env.REDIS_URL, 'tollgate:example-express:');
const app = createApp(shared.store);
let server: Server | undefined;

await serve({
  framework: 'Express',
  port,
  shared,
  listen: () =>
    new Promise((resolve, reject) => {
      server = app.listen(port, '127.0.0.1', (error?: Error) => (error ? reject(error) : resolve()));
    }),
  // close() waits for requests in flight and drops idle keep-alive connections.
  close: () => new Promise((resolve) => (server ? server.close(() => resolve()) : resolve())),
});
