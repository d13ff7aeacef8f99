/**
 * Exactness in every Nest context: two processes (this one and one worker) serve the same apps
 * (`race-apps.ts`: GraphQL with Apollo on Express and on Fastify and with Mercurius on Fastify, a
 * WebSocket gateway, a TCP microservice) on one Redis. In each context, 300 operations at once, half to
 * each process, against a limit of 100 spread over both, admit exactly 100; the others are refused as
 * that context refuses: a GraphQL error, an `exception` event, an `RpcException`, each carrying the
 * problem details.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { ClientProxyFactory, type ClientTCP, Transport } from '@nestjs/microservices';
import { QUOTA_EXCEEDED_TYPE } from '@tollgate/core';
import { firstValueFrom } from 'rxjs';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import { uniquePrefix } from '../../harness/clients.js';
import { RACE_CONTEXTS, RACE_LIMIT, type RaceAddresses, startRaceApps } from './race-apps.js';

const WORKER = fileURLToPath(new URL('./race-worker.ts', import.meta.url));
const HOOKS = fileURLToPath(new URL('./nest12-hooks.mjs', import.meta.url));
/** Operations sent to each of the two processes, in each context. */
const PER_PROCESS = 150;
const REFUSALS = 2 * PER_PROCESS - RACE_LIMIT;

/** What every context's refusal carries: the problem details, Tollgate's code and the wait. */
const REFUSAL = {
  code: 'TOLLGATE_RATE_LIMITED',
  status: 429,
  type: QUOTA_EXCEEDED_TYPE,
  'violated-policies': [`${RACE_LIMIT}-per-1h`],
  retryAfter: expect.any(Number),
  retryAfterMs: expect.any(Number),
};
const REFUSAL_SENTENCE = /^Too many requests: retry in \d+ seconds?\.$/;

/** One operation's outcome: admitted, or the details its refusal carried. */
type Outcome = 'won' | Record<string, unknown>;

let here: Awaited<ReturnType<typeof startRaceApps>> | undefined;
let worker: ChildProcess | undefined;
let addresses: RaceAddresses[] = [];

beforeAll(async () => {
  const prefix = uniquePrefix('nestjs-exactness');
  const [apps, there] = await Promise.all([startRaceApps(inject('redisUrl'), prefix), startWorker(prefix)]);
  here = apps;
  addresses = [apps.addresses, there];
}, 120_000); // a worker that loads Nest, Apollo, Mercurius and tsx takes long to start while the other suites run

afterAll(async () => {
  worker?.stdin?.end();
  await Promise.all([worker && worker.exitCode === null ? once(worker, 'exit') : undefined, here?.close()]);
});

/** Starts the worker and resolves with the addresses of its apps, which it prints as `ready <json>`. */
async function startWorker(prefix: string): Promise<RaceAddresses> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', HOOKS, WORKER, inject('redisUrl'), prefix],
    { cwd: fileURLToPath(new URL('.', import.meta.url)), stdio: ['pipe', 'pipe', 'inherit'] },
  );
  worker = child;
  let output = '';
  child.stdout?.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk: string) => {
      output += chunk;
      const ready = /^ready (.+)$/m.exec(output)?.[1];
      if (ready) resolve(JSON.parse(ready) as RaceAddresses);
    });
    child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
  });
}

/** `count` GraphQL operations at once; a refusal is the error on the `race` field. */
async function graphqlRace(url: string, count: number): Promise<Outcome[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const response = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ race }' }),
      });
      const body = (await response.json()) as {
        data: { race: string | null };
        errors?: { message: string; path: string[]; extensions: Record<string, unknown> }[];
      };
      if (body.data.race === 'won' && body.errors === undefined) return 'won';
      expect(body.errors).toHaveLength(1);
      expect(body.errors?.[0]).toMatchObject({
        message: expect.stringMatching(REFUSAL_SENTENCE),
        path: ['race'],
      });
      return body.errors?.[0]?.extensions ?? {};
    }),
  );
}

/** `count` messages at once over 5 connections; a refusal is an `exception` event. */
async function gatewayRace(url: string, count: number): Promise<Outcome[]> {
  const connections = 5;
  const answers = await Promise.all(
    Array.from({ length: connections }, async () => {
      const socket = new WebSocket(url);
      await once(socket, 'open');
      const expected = count / connections;
      const received: { event: string; data: unknown }[] = [];
      const all = new Promise<void>((resolve) =>
        socket.on('message', (raw) => {
          received.push(JSON.parse(String(raw)));
          if (received.length === expected) resolve();
        }),
      );
      for (let i = 0; i < expected; i++) socket.send(JSON.stringify({ event: 'race', data: {} }));
      await all;
      socket.close();
      return received;
    }),
  );
  return answers.flat().map((answer) => {
    if (answer.event === 'race' && answer.data === 'won') return 'won';
    expect(answer).toEqual({ event: 'exception', data: expect.any(Object) });
    const data = answer.data as Record<string, unknown>;
    expect(data.message).toMatch(REFUSAL_SENTENCE);
    return data;
  });
}

/** `count` messages at once through one client; a refusal is the `RpcException`'s error. */
async function microserviceRace(address: string, count: number): Promise<Outcome[]> {
  const { hostname, port } = new URL(address);
  const client = ClientProxyFactory.create({
    transport: Transport.TCP,
    options: { host: hostname, port: Number(port) },
  }) as ClientTCP;
  await client.connect();
  try {
    return await Promise.all(
      Array.from({ length: count }, () =>
        firstValueFrom(client.send<string>('race', {})).then(
          (answer): Outcome => (answer === 'won' ? 'won' : { unexpected: answer }),
          (error: Record<string, unknown>): Outcome => {
            expect(error.message).toMatch(REFUSAL_SENTENCE);
            return error;
          },
        ),
      ),
    );
  } finally {
    await client.close();
  }
}

const RACES: Record<string, (address: string, count: number) => Promise<Outcome[]>> = {
  'WebSocket gateway': gatewayRace,
  'TCP microservice': microserviceRace,
};

it.each(RACE_CONTEXTS)('%s: admits exactly the limit across two processes on one Redis', async (context) => {
  const race = RACES[context] ?? graphqlRace;
  const outcomes = (
    await Promise.all(addresses.map((apps) => race(apps[context] as string, PER_PROCESS)))
  ).flat();
  expect(outcomes.filter((outcome) => outcome === 'won')).toHaveLength(RACE_LIMIT);
  expect(outcomes.filter((outcome) => outcome !== 'won')).toEqual(
    Array.from({ length: REFUSALS }, () => expect.objectContaining(REFUSAL)),
  );
});
