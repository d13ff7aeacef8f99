/**
 * Serves the runtime suite's app on `Bun.serve`, on a free port of 127.0.0.1, and prints
 * `listening on <url>` once it takes requests. The client address is the README's Bun recipe: the
 * server, the fetch handler's second argument, knows each request's peer. SIGTERM stops it.
 */
import { getConnInfo } from 'hono/bun';
import { appSettings, runtimeApp } from './runtime-app.ts';

const app = await runtimeApp(appSettings(process.env), {
  ip: (request: Request, server: Bun.Server<undefined>) => server.requestIP(request)?.address,
  getConnInfo,
});
const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
console.log(`listening on ${server.url}`);

process.once('SIGTERM', async () => {
  await server.stop(true);
  await app.close();
  process.exit(0);
});
