/**
 * A Web answer's end, on the core alone: with the runtime's Node.js response in its bindings
 * (@hono/node-server's `{ incoming, outgoing }`) it ends with that response, whoever read the body;
 * without one, when its body was read to the end or cancelled. Given a `waitUntil` (Workers' `ctx`), it
 * hands it the work its end starts.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { type WaitUntilContext, WebAnswer } from '../../../src/http/pipeline/web-answer.js';

/** The part of a Node.js `ServerResponse` the answer watches, ended or closed as the test says. */
class FakeOutgoing extends EventEmitter {
  writableEnded = false;
  closed = false;

  close(ended: boolean): void {
    this.writableEnded = ended;
    this.closed = true;
    this.emit('close');
  }
}

const request = () => new Request('http://app.test/report');

/** An answer for a new request, with an end listener, as a refund or a lease adds one. */
function watchedAnswer(bindings?: unknown): { answer: WebAnswer; ended: boolean[] } {
  const answer = WebAnswer.for(request(), 'GET', bindings);
  const ended: boolean[] = [];
  answer.once('close', () => ended.push(answer.writableEnded));
  return { answer, ended };
}

describe('a Web answer on @hono/node-server', () => {
  it('ends when the Node.js response ends, not when a middleware reads a copy of its body to the end', async () => {
    const outgoing = new FakeOutgoing();
    const { answer, ended } = watchedAnswer({ incoming: {}, outgoing });
    const sent = answer.finish(new Response('the whole body'));
    expect(await sent.clone().text()).toBe('the whole body'); // what etag() does
    expect(ended).toEqual([]);
    outgoing.close(true);
    expect(ended).toEqual([true]);
  });

  it('ends not sent when the client went away first, and when no answer was finished yet', () => {
    const gone = new FakeOutgoing();
    const first = watchedAnswer({ outgoing: gone });
    first.answer.finish(new Response('part of it'));
    gone.close(false);
    const early = new FakeOutgoing();
    const second = watchedAnswer({ outgoing: early });
    early.close(true);
    expect([first.ended, second.ended]).toEqual([[false], [false]]);
  });

  it('ends at once when its Node.js response closed before anything waited for it', () => {
    const outgoing = new FakeOutgoing();
    outgoing.close(false);
    expect(watchedAnswer({ outgoing }).ended).toEqual([false]);
  });
});

describe('a Web answer without a Node.js response', () => {
  it('ends when its body was read to the end, for bindings other runtimes pass', async () => {
    for (const bindings of [undefined, { remoteAddr: {} }, { outgoing: 'not a response' }, null]) {
      const { answer, ended } = watchedAnswer(bindings);
      await answer.finish(new Response('body')).text();
      expect(ended).toEqual([true]);
    }
  });

  it('takes no outgoing a polluted Object.prototype holds', async () => {
    const prototype = Object.prototype as { outgoing?: unknown };
    prototype.outgoing = new FakeOutgoing();
    try {
      const { answer, ended } = watchedAnswer({});
      await answer.finish(new Response('body')).text();
      expect(ended).toEqual([true]);
    } finally {
      delete prototype.outgoing;
    }
  });
});

describe("a Web answer given the runtime's waitUntil (Cloudflare Workers' ctx)", () => {
  it('hands it the work its end starts, which settles once that work is done', async () => {
    const handed: Promise<unknown>[] = [];
    const answer = WebAnswer.for(request(), 'GET', undefined, { waitUntil: (work) => handed.push(work) });
    const done: string[] = [];
    answer.once('close', async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      done.push('refund');
    });
    answer.once('close', () => done.push('release'));
    await answer.finish(new Response('body')).text();
    expect(handed).toHaveLength(1);
    expect(done).toEqual(['release']);
    await handed[0];
    expect(done).toEqual(['release', 'refund']);
  });

  it('takes no context without a waitUntil function, and hands nothing when nothing waited for the end', async () => {
    const odd = WebAnswer.for(request(), 'GET', undefined, {
      waitUntil: 'later',
    } as unknown as WaitUntilContext);
    odd.once('close', () => undefined);
    await expect(odd.finish(new Response('body')).text()).resolves.toBe('body');
    const handed: unknown[] = [];
    WebAnswer.for(request(), 'GET', undefined, { waitUntil: (work) => handed.push(work) }).end(true);
    expect(handed).toEqual([]);
  });
});
