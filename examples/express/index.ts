/** Starts the Express example on PORT (default 3000). */
import { serveRequestListener } from '@tollgate/example-support/serve';
import { openStore } from '@tollgate/example-support/store';
import { createApp } from './app.js';

const shared = openStore(process.env.REDIS_URL, 'tollgate:example-express:');
await serveRequestListener('Express', Number(process.env.PORT ?? 3000), shared, createApp(shared.store));
