/** Starts the Express example on PORT (default 3000); with `--stats` (or TOLLGATE_STATS=1), a line a second of what the limiters decided. */
import { serveRequestListener } from '@tollgate/example-support/serve';
import { printDecisionStats, statsRequested } from '@tollgate/example-support/stats';
import { openStore } from '@tollgate/example-support/store';
import { createApp } from './app.js';

const port = Number(process.env.PORT ?? 3000);
const shared = openStore(process.env.REDIS_URL, 'tollgate:example-express:');
const stats = statsRequested();
if (stats) printDecisionStats((line) => console.log(`[stats] ${line}`));
await serveRequestListener('Express', port, shared, createApp(shared.store));
if (stats) {
  console.log(
    '\nLive stats: each second with traffic, the decisions of every limiter (a request to /login is checked by\n' +
      'two: site and login), from the tollgate:decision channel. A burst of 30:\n' +
      `  for i in $(seq 30); do curl -s -o /dev/null http://127.0.0.1:${port}/ & done; wait`,
  );
}
