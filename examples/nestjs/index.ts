/** Starts the NestJS example on PORT (default 3004). */
import { serve } from '@tollgate/example-support/serve';
import { openStore } from '@tollgate/example-support/store';
import { createApp } from './app.js';

const port = Number(process.env.PORT ?? 3004);
const shared = openStore(process.env.REDIS_URL, 'tollgate:example-nestjs:');
const app = await createApp(shared.store);

await serve({
  framework: 'NestJS',
  port,
  shared,
  listen: async () => {
    await app.listen(port, '127.0.0.1');
  },
  close: () => app.close(),
});
