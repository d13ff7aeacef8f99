/**
 * examples/nestjs-graphql: the app answers as its printed lines promise, over HTTP (GraphQL) and over
 * WebSocket (the chat gateway).
 */
import { once } from 'node:events';
import type { INestApplication } from '@nestjs/common';
import { MemoryStore } from '@tollgate/core';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import { createApp } from '../../../examples/nestjs-graphql/app.js';
import { startExample } from '../../harness/example-process.js';
import { freePort } from '../../harness/redis-server.js';

describe('examples/nestjs-graphql', () => {
  let app: INestApplication;
  let url: string;
  beforeEach(async () => {
    app = await createApp(new MemoryStore());
    await app.listen(0, '127.0.0.1');
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });
  afterEach(() => app.close());

  async function query(text: string, headers: Record<string, string> = {}) {
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query: text }),
    });
    const body = (await response.json()) as {
      data: Record<string, unknown> | null;
      errors?: { extensions: Record<string, unknown> }[];
    };
    return { headers: response.headers, ...body };
  }

  it('limits recommendations apart from the app-wide limit, and refuses with a GraphQL error', async () => {
    for (let i = 0; i < 5; i++) {
      expect((await query('{ recommendations }')).data).toEqual({ recommendations: ['Dune', 'Emma'] });
    }
    const refused = await query('{ recommendations books }');
    expect(refused.data).toEqual({
      recommendations: null,
      books: ['Dune', 'Emma', 'Middlemarch', 'Ulysses'],
    });
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'TOLLGATE_RATE_LIMITED', status: 429 });
    expect(refused.headers.get('ratelimit')).toMatch(/^"5-per-1m";r=0;t=\d+, "30-per-1m";r=29;t=\d+$/);
    expect((await query('{ health }')).headers.get('ratelimit')).toBeNull();
  });

  it('keys reviews by user', async () => {
    const ann = { 'x-user': 'ann' };
    expect((await query('mutation { addReview }', ann)).data).toEqual({ addReview: true });
    expect((await query('mutation { addReview }', ann)).data).toEqual({ addReview: true });
    expect((await query('mutation { addReview }', ann)).errors?.[0]?.extensions.code).toBe(
      'TOLLGATE_RATE_LIMITED',
    );
    expect((await query('mutation { addReview }', { 'x-user': 'bob' })).data).toEqual({ addReview: true });
  });

  it('answers the 6th chat message in 10 seconds with an exception event', async () => {
    const socket = new WebSocket(`${url.replace('http', 'ws')}/chat`);
    await once(socket, 'open');
    const answers: unknown[] = [];
    socket.on('message', (raw) => answers.push(JSON.parse(String(raw))));
    for (let i = 0; i < 6; i++) socket.send(JSON.stringify({ event: 'chat', data: 'hi' }));
    await new Promise<void>((resolve) => socket.on('message', () => answers.length === 6 && resolve()));
    socket.close();
    expect(answers.slice(0, 5)).toEqual(
      Array.from({ length: 5 }, () => ({ event: 'chat', data: 'delivered' })),
    );
    expect(answers[5]).toMatchObject({ event: 'exception', data: { code: 'TOLLGATE_RATE_LIMITED' } });
  });
});

describe.each([
  ['in memory', () => ({}), /store: memory/],
  ['on Redis', () => ({ REDIS_URL: inject('redisUrl') }), /store: Redis at 127\.0\.0\.1:\d+/],
])('examples/nestjs-graphql start, %s', (_name, env, storeLine) => {
  it('serves GraphQL until SIGTERM, then closes the server and the store', async () => {
    const port = await freePort();
    const { child, banner } = await startExample('nestjs-graphql', 'Not limited', {
      ...env(),
      PORT: String(port),
    });
    try {
      expect(banner).toMatch(storeLine);
      const answer = await fetch(`http://127.0.0.1:${port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ books }' }),
      });
      expect(await answer.json()).toEqual({ data: { books: ['Dune', 'Emma', 'Middlemarch', 'Ulysses'] } });
      expect(answer.headers.get('ratelimit')).toMatch(/^"30-per-1m";r=29;t=\d+$/);
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  }, 120_000);
});
