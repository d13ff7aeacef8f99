/**
 * A limiter reached after something else already sent the response head — a timeout middleware answered
 * 503 while a slow client was still sending its body — writes nothing more, never throws past the
 * framework (Express 4 would exit on an unhandled rejection), and serves only what it admits.
 */
import { MemoryStore } from '@tollgate/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BeforeLimiter, lifecycleFrameworks } from './lifecycle-apps.js';
import { close, listen, send } from './lifecycle-sockets.js';

/** Like connect-timeout: an `x-slow` request is answered 503 before the rest of the chain runs. */
const timeoutStep: BeforeLimiter = async (req, res) => {
  if (req.headers['x-slow'] === undefined) return;
  res.writeHead(503, { 'content-type': 'text/plain' });
  res.write('timed out'); // the head is out; the chain goes on, as it does after a timeout
};

let unhandled: unknown[] = [];
const collect = (reason: unknown) => unhandled.push(reason);
beforeEach(() => {
  unhandled = [];
  process.on('unhandledRejection', collect);
});
afterEach(() => {
  process.off('unhandledRejection', collect);
});

describe.each(lifecycleFrameworks)('%s', (_framework, build) => {
  it('writes no header after the head went out, never throws, and serves only what it admits', async () => {
    const errors: string[] = [];
    const logger = { warn: (line: string) => errors.push(line), error: (line: string) => errors.push(line) };
    const options = { limit: 1, window: '1h', store: new MemoryStore(), name: 'late', logger };
    const app = await build(timeoutStep, { kind: 'rate', options: options as never });
    const server = await listen(app.listener);
    try {
      const first = send(server, { 'x-slow': '1' });
      expect(await first.status).toBe(503);
      const second = send(server, { 'x-slow': '1' });
      expect(await second.status).toBe(503);
      first.abort();
      second.abort();
      expect(await send(server).status).toBe(429); // the server is up, and the admitted one was charged
      expect(app.handled()).toBe(1); // the refused one never reached its handler
      expect(unhandled).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await close(server);
    }
  });
});
