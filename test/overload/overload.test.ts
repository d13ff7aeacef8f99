/**
 * Exactness under overload: four app processes share one Redis, each one's event loop blocked again and
 * again for longer than the default timeout, and 2,000 requests arrive at once. A busy process must not
 * mistake its own lateness for a silent store: exactly the limit is admitted, and every answer carries
 * rate-limit headers.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';

const SERVER = fileURLToPath(new URL('./app-server.ts', import.meta.url));
const PROCESSES = 4;
const REQUESTS = 2_000;
const LIMIT = 100; // per hour: less than one token refills during the burst

async function startServer(framework: string, name: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER, framework, inject('redisUrl'), name], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.setEncoding('utf8').once('data', (line: string) => resolve(Number(line.trim())));
    child.once('exit', (code) => reject(new Error(`app server exited early with ${code}`)));
  });
  return { child, port };
}

function get(port: number): Promise<{ status: number; rateLimit: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, rateLimit: res.headers.ratelimit as string }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe.each(['express', 'fastify', 'koa', 'hono', 'nestjs'])(
  '%s, 4 processes on one Redis, event loops starved',
  (framework) => {
    it(`admits exactly the limit of ${REQUESTS} concurrent requests, every answer with headers`, async () => {
      const name = `overload-${framework}-${process.pid}-${Date.now()}`;
      const servers = await Promise.all(
        Array.from({ length: PROCESSES }, () => startServer(framework, name)),
      );
      try {
        const answers = await Promise.all(
          Array.from({ length: REQUESTS }, (_, i) => get((servers[i % PROCESSES] as { port: number }).port)),
        );
        const admitted = answers.filter((a) => a.status === 200).length;
        expect(answers.filter((a) => a.status !== 200 && a.status !== 429)).toEqual([]);
        expect(answers.filter((a) => a.rateLimit === undefined)).toHaveLength(0);
        expect(admitted).toBe(LIMIT);
      } finally {
        for (const { child } of servers) child.kill('SIGTERM');
      }
    }, 120_000);
  },
);
