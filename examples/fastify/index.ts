/** Starts the Fastify example on PORT (default 3001). */
import { serve } from '@tollgate/example-support/serve';
import { openStore } from '@tollgate/example-support/store';
import { createApp } from './app.js';

const port = Number(process.env.PORT ?? 3001);
const shared = openStore(process.env.REDIS_URL, 'tollgate:example-fastify:');
const app = await createApp(shared.store);

await serve({
  framework: 'Fastify',
  port,
  shared,
  listen: async () => {
    await app.listen({ port, host: '127.0.0.1' });
  },
  close: () => app.close(),
});
