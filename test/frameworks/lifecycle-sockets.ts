/** Real sockets for the lifecycle tests: a listening server, requests a test can abort, and waiting for a condition. */
import { createServer, request as httpRequest, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** A server listening on a free loopback port. */
export async function listen(listener: RequestListener): Promise<Server> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

export function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A request in flight: its status once the head arrives (the body is not awaited), or a hang-up. */
export interface SentRequest {
  readonly status: Promise<number>;
  abort(): void;
}

/** Sends `GET /` with `headers`; the status resolves when the response head arrives. */
export function send(server: Server, headers: Record<string, string> = {}): SentRequest {
  const { port } = server.address() as AddressInfo;
  const req = httpRequest({ port, host: '127.0.0.1', path: '/', headers, agent: false });
  const status = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
      res.on('error', () => {});
    });
    req.on('error', reject);
  });
  status.catch(() => {}); // an aborted request has no status; the test knows
  req.end();
  return {
    status,
    abort() {
      req.on('error', () => {});
      req.destroy();
    },
  };
}

/** Waits until `condition` holds: the sockets and the store move on their own time, not a test clock. */
export async function until(condition: () => boolean, what: string): Promise<void> {
  for (let tries = 0; !condition(); tries++) {
    if (tries > 2_000) throw new Error(`gave up waiting until ${what}`);
    await sleep(5);
  }
}
