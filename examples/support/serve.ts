/** Starts an example server on loopback, prints how to try it, and stops it cleanly on Ctrl-C or SIGTERM. */
import { createServer, type RequestListener } from 'node:http';
import type { SharedStore } from './store.js';
import { usage } from './usage.js';

/** How to start and stop one example's server. */
export interface ExampleServer {
  /** `Express`, `Fastify`, `Koa`: for the banner. */
  readonly framework: string;
  readonly port: number;
  readonly shared: SharedStore;
  /** Listens on 127.0.0.1:port; rejects if it cannot. */
  listen(): Promise<void>;
  /** Stops taking requests and waits for those in flight. */
  close(): Promise<void>;
}

/**
 * Runs the server until a signal. The store closes after the server, since it outlives every request.
 *
 * @example
 * await serve({ framework: 'Koa', port: 3002, shared, listen: …, close: … });
 */
export async function serve(server: ExampleServer): Promise<void> {
  const { framework, port, shared } = server;
  try {
    // Loopback only: this is a demo, not something to expose.
    await server.listen();
  } catch (error) {
    console.error(`cannot listen on 127.0.0.1:${port}: ${(error as Error).message}`);
    await shared.close();
    process.exit(1);
  }
  const baseUrl = `http://127.0.0.1:${port}`;
  console.log(`${framework} example on ${baseUrl}, store: ${shared.description}\n`);
  console.log(usage(baseUrl));

  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, async () => {
      // A second Ctrl-C means "now": do not wait for slow requests.
      if (stopping) process.exit(1);
      stopping = true;
      console.log(`\n${signal}: closing the server and the store`);
      await server.close();
      await shared.close();
    });
  }
}

/**
 * {@link serve} for an app that is a Node request listener (an Express app, a Koa `app.callback()`).
 *
 * @example
 * await serveRequestListener('Express', 3000, shared, createApp(shared.store));
 */
export async function serveRequestListener(
  framework: string,
  port: number,
  shared: SharedStore,
  listener: RequestListener,
): Promise<void> {
  const server = createServer(listener);
  await serve({
    framework,
    port,
    shared,
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject).listen(port, '127.0.0.1', () => resolve());
      }),
    // close() waits for requests in flight; idle keep-alive connections are dropped.
    close: () => new Promise((resolve) => server.close(() => resolve())),
  });
}
