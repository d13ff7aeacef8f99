/**
 * Starts the Hono example on `Bun.serve`, on PORT (default 3005): `pnpm --filter @tollgate/example-bun
 * start`. In memory by default; on Redis when REDIS_URL is set.
 */
import { serve } from '@tollgate/example-support/serve';
import { openStore } from '@tollgate/example-support/store';
import { createApp } from './app.js';

const port = Number(process.env.PORT ?? 3005);
const shared = openStore(process.env.REDIS_URL, 'tollgate:example-bun:');
const app = createApp(shared.store);
let server: Bun.Server<undefined> | undefined;

await serve({
  framework: 'Hono on Bun',
  port,
  shared,
  // Loopback only, as the other examples: a demo, not something to expose.
  listen: async () => {
    server = Bun.serve({ hostname: '127.0.0.1', port, fetch: app.fetch });
  },
  // Stops taking connections and waits for the requests in flight.
  close: async () => server?.stop(),
});
