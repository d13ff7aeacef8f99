/**
 * Exactness in a GraphQL resolver: two processes (this one and a worker) serving one Nest API (Apollo on
 * Express) on one Redis, 300 operations at once against a limit of 100 spread over both, admit exactly
 * 100; the others are refused as GraphQL errors.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, inject, it } from 'vitest';
import { uniquePrefix } from '../../harness/clients.js';
import { startRaceApp } from './graphql-race.js';

const WORKER = fileURLToPath(new URL('./graphql-worker.ts', import.meta.url));
const HOOKS = fileURLToPath(new URL('./nest12-hooks.mjs', import.meta.url));
const children: ChildProcess[] = [];
const closing: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const child of children) child.stdin?.end();
  await Promise.all([...children.map((child) => once(child, 'exit')), ...closing.map((close) => close())]);
});

/** Starts a worker and resolves with the URL it listens on. */
async function startWorker(prefix: string): Promise<string> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', HOOKS, WORKER, inject('redisUrl'), prefix],
    { cwd: fileURLToPath(new URL('.', import.meta.url)), stdio: ['pipe', 'pipe', 'inherit'] },
  );
  children.push(child);
  let output = '';
  child.stdout?.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk: string) => {
      output += chunk;
      const url = /^ready (\S+)$/m.exec(output)?.[1];
      if (url) resolve(url);
    });
    child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
  });
}

it('admits exactly the limit across two processes on one Redis', async () => {
  const prefix = uniquePrefix('nestjs-graphql-exactness');
  const [here, worker] = await Promise.all([startRaceApp(inject('redisUrl'), prefix), startWorker(prefix)]);
  closing.push(here.close);
  const urls = [here.url, worker];
  const answers = await Promise.all(
    Array.from({ length: 300 }, async (_, i) => {
      const response = await fetch(`${urls[i % 2]}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ race }' }),
      });
      return (await response.json()) as {
        data: { race: string | null };
        errors?: { extensions: { code: string } }[];
      };
    }),
  );
  const won = answers.filter((answer) => answer.data.race === 'won');
  expect(won).toHaveLength(100);
  const codes = answers.flatMap((answer) => answer.errors ?? []).map((error) => error.extensions.code);
  expect(codes).toEqual(Array.from({ length: 200 }, () => 'TOLLGATE_RATE_LIMITED'));
}, 120_000); // a worker that loads Nest, Apollo and tsx takes long to start while the other suites run
