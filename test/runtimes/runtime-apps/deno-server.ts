/**
 * Serves the runtime suite's app on `Deno.serve`, on a free port of 127.0.0.1, and prints
 * `listening on <url>` once it takes requests. The client address is the README's Deno recipe: the
 * handler's second argument says who connected, an IP over TCP. SIGTERM stops it.
 */
import { getConnInfo } from 'hono/deno';
import { appSettings, runtimeApp } from './runtime-app.ts';

const app = await runtimeApp(appSettings(Deno.env.toObject()), {
  ip: (_request: Request, info: Deno.ServeHandlerInfo) =>
    'hostname' in info.remoteAddr ? info.remoteAddr.hostname : undefined,
  getConnInfo,
});
const server = Deno.serve(
  {
    hostname: '127.0.0.1',
    port: 0,
    onListen: ({ hostname, port }) => console.log(`listening on http://${hostname}:${port}/`),
  },
  app.fetch,
);

Deno.addSignalListener('SIGTERM', async () => {
  await server.shutdown();
  await app.close();
  Deno.exit(0);
});
