/**
 * Starts the example on `Deno.serve`, on PORT (default 3006): `pnpm --filter @tollgate/example-deno
 * start`. In memory by default; on Redis when REDIS_URL is set.
 */
import { serve } from '@tollgate/example-support/serve';
import { openStore } from '@tollgate/example-support/store';
import { createApp } from './app.ts';

const port = Number(Deno.env.get('PORT') ?? 3006);
const shared = openStore(Deno.env.get('REDIS_URL'), 'tollgate:example-deno:');
const handler = createApp(shared.store);
let server: Deno.HttpServer | undefined;

await serve({
  framework: 'Deno',
  port,
  shared,
  // Loopback only, as the other examples: a demo, not something to expose.
  listen: async () => {
    server = Deno.serve({ hostname: '127.0.0.1', port, onListen: () => {} }, handler);
  },
  // Stops taking connections and waits for the requests in flight.
  close: async () => server?.shutdown(),
});
