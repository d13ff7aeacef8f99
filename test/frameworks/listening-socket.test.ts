/**
 * Through real sockets: the client IP comes from the connection itself, and a client reaching a
 * dual-stack server as `::ffff:127.0.0.1` is the same client as `127.0.0.1` on an IPv4 server.
 */

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MemoryStore } from '@tollgate/core';
import { rateLimit } from '@tollgate/express';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function listen(app: express.Express, host: string): Promise<number> {
  const server = createServer(app);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return (server.address() as AddressInfo).port;
}

function appSharing(store: MemoryStore, seenIps: string[]): express.Express {
  const app = express();
  app.use(rateLimit({ limit: 1, window: '1h', store, name: 'socket-test' }));
  app.get('/', (req, res) => {
    seenIps.push(req.ip ?? '');
    res.send('ok');
  });
  return app;
}

describe('a real listening server', () => {
  it('keys an IPv4 client the same over a dual-stack and an IPv4-only socket', async () => {
    const store = new MemoryStore();
    const seenIps: string[] = [];
    const dualStackPort = await listen(appSharing(store, seenIps), '::');
    const ipv4Port = await listen(appSharing(store, seenIps), '127.0.0.1');

    const first = await fetch(`http://127.0.0.1:${dualStackPort}/`);
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit')).toBe('"1-per-1h";r=0;t=3600');
    expect(seenIps).toEqual(['::ffff:127.0.0.1']); // the socket really was dual-stack

    const second = await fetch(`http://127.0.0.1:${ipv4Port}/`);
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('3600');
  });
});
