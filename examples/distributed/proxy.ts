/** A round-robin HTTP proxy on loopback: a load balancer in thirty lines, so the demo needs nothing else. */
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running proxy. */
export interface RoundRobinProxy {
  readonly port: number;
  close(): Promise<void>;
}

/** The response header that names the upstream (by index) that answered, so the demo can count per process. */
export const UPSTREAM_HEADER = 'x-upstream-index';

/**
 * Starts a proxy on 127.0.0.1 that sends each request to the next of `upstreamPorts` in turn, adding the
 * client's address to X-Forwarded-For as a real load balancer does.
 *
 * @example
 * const proxy = await startRoundRobinProxy([4001, 4002, 4003]);
 */
export async function startRoundRobinProxy(upstreamPorts: readonly number[]): Promise<RoundRobinProxy> {
  const agent = new Agent({ keepAlive: true });
  let next = 0;

  const server = createServer(function forward(req, res) {
    const index = next++ % upstreamPorts.length;
    const forwardedFor = [req.headers['x-forwarded-for'], req.socket.remoteAddress]
      .filter(Boolean)
      .join(', ');
    const upstream = request(
      {
        host: '127.0.0.1',
        port: upstreamPorts[index],
        method: req.method,
        path: req.url,
        headers: { ...req.headers, 'x-forwarded-for': forwardedFor },
        agent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, { ...answer.headers, [UPSTREAM_HEADER]: String(index) });
        answer.pipe(res);
      },
    );
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`upstream ${index} failed: ${error.message}\n`);
    });
    req.pipe(upstream);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
      agent.destroy();
      await closed;
    },
  };
}
