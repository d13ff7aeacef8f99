/**
 * The deadline watch tells a silent store from a busy process: an answer that came while this process
 * blocked its event loop still decides, even when the loop blocks after the watch's timer has fired.
 */
import { once } from 'node:events';
import { createConnection, type Socket } from 'node:net';
import { MessageChannel, Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DeadlineWatch } from '../../src/support/deadline-watch.js';
import { StoreUnavailableError } from '../../src/support/store-error.js';

/**
 * A peer on a thread of its own: it answers `go` after `delayMs`, whatever this thread is doing, and
 * then raises `sent[0]`, once the answer is on its way.
 */
const PEER = `
const { createServer } = require('node:net');
const { parentPort, workerData } = require('node:worker_threads');
const sent = new Int32Array(workerData.sent);
const server = createServer((socket) => {
  socket.on('data', () =>
    setTimeout(() => socket.write('answer', () => Atomics.store(sent, 0, 1)), workerData.delayMs),
  );
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
`;

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function peer(delayMs: number): Promise<{ socket: Socket; sent: Int32Array }> {
  const sent = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(PEER, { eval: true, workerData: { delayMs, sent: sent.buffer } });
  cleanups.push(() => worker.terminate());
  const [port] = (await once(worker, 'message')) as [number];
  const socket = createConnection({ port, host: '127.0.0.1' });
  cleanups.push(() => socket.destroy());
  await once(socket, 'connect');
  return { socket, sent };
}

/** Blocks this thread for at least `ms`, and until `sent[0]` is raised (for 5 s at most). */
function blockFor(ms: number, sent: Int32Array): void {
  const started = performance.now();
  const until = started + ms;
  while (performance.now() < until || (Atomics.load(sent, 0) === 0 && performance.now() < started + 5_000));
}

describe('DeadlineWatch', () => {
  it('gives up on a call that finds no answer, and not on one whose answer came while the loop was blocked', async () => {
    const { socket, sent } = await peer(40);
    const answered = new Promise<string>((resolve) => socket.once('data', (data) => resolve(String(data))));
    // Posted on this thread: handled by the next poll for I/O, which reads what had come before it.
    const busy = new MessageChannel();
    cleanups.push(() => busy.port1.close());
    busy.port2.on('message', () => blockFor(200, sent));

    const watch = new DeadlineWatch();
    const silent = watch.watch(new Promise<never>(() => {}), 0);
    const late = watch.watch(answered, 100);
    // Due with the watch's own timer, after it: asks now, in the turn the watch takes before its verdict,
    // and blocks the loop in the poll after it until the answer has come (40 ms in) and `late` has
    // fallen due.
    setTimeout(() => {
      setImmediate(() => {
        socket.write('go');
        busy.port1.postMessage('block');
      });
    }, 1);

    await expect(silent).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(late).resolves.toBe('answer');
  });

  it('gives up on a call whose answer does not come within its timeout', async () => {
    const { socket } = await peer(200);
    const answered = new Promise<string>((resolve) => socket.once('data', (data) => resolve(String(data))));
    const watch = new DeadlineWatch();
    const late = watch.watch(answered, 50);
    socket.write('go');
    await expect(late).rejects.toThrow('did not answer within 50 ms');
  });

  it('times a call written again from then, unless it was given up on first', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'performance'] });
    cleanups.push(() => vi.useRealTimers());
    const watch = new DeadlineWatch();
    let renew: () => boolean = () => true;
    let answer: (value: string) => void = () => {};
    const call = watch.watchCall(
      (renewed) =>
        new Promise<string>((resolve) => {
          renew = renewed;
          answer = resolve;
        }),
      60,
    );
    // Written again 40 ms in: its 60 ms run from then, so an answer 80 ms in still decides.
    await vi.advanceTimersByTimeAsync(40);
    expect(renew()).toBe(true);
    await vi.advanceTimersByTimeAsync(40);
    answer('answer');
    await expect(call).resolves.toBe('answer');

    const silent = watch.watchCall((renewed) => {
      renew = renewed;
      return new Promise<never>(() => {});
    }, 60);
    const given = expect(silent).rejects.toBeInstanceOf(StoreUnavailableError);
    await vi.advanceTimersByTimeAsync(100);
    await given;
    // Given up on: what it writes again must change nothing.
    expect(renew()).toBe(false);
  });

  it('rejects a call that throws as it is written with its own error', async () => {
    const watch = new DeadlineWatch();
    await expect(
      watch.watchCall(() => {
        throw new TypeError('not written');
      }, 60),
    ).rejects.toThrow('not written');
  });
});
