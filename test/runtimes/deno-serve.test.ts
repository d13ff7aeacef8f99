/**
 * @tollgate/fetch and @tollgate/hono on `Deno.serve`: the runtime suite's table on every store, and the
 * app, examples/deno's app and the READMEs' Deno blocks passing `deno check`.
 */
import { readFile } from 'node:fs/promises';
import { beforeAll, expect, it } from 'vitest';
import { deno } from './runtime-process.js';
import { runtimeSuite } from './runtime-suite.js';
import { denoCheck, readmeBlocks, writeBlocks } from './runtime-typecheck.js';

const suite = runtimeSuite(deno, 'deno-server.ts');
const blocks = readmeBlocks('Deno');
let checked: Promise<string>;

// `deno check` runs while the servers answer the table: it has a process of its own.
beforeAll(async () => {
  const project = suite.project();
  // examples/deno's app too: it imports only @tollgate/fetch (its index.ts, the workspace's own helpers).
  const example = await readFile(new URL('../../examples/deno/app.ts', import.meta.url), 'utf8');
  await project.write('example-deno-app.ts', example);
  checked = denoCheck(project, [
    'deno-server.ts',
    'example-deno-app.ts',
    ...(await writeBlocks(project, blocks)),
  ]);
});

it("the app, examples/deno's and the READMEs' Deno blocks, as written, pass deno check", async () => {
  // One block in each README: fetch's and Hono's.
  expect(blocks.map(({ where }) => where.split(':')[0])).toEqual([
    'packages/fetch/README.md',
    'packages/hono/README.md',
  ]);
  expect(await checked).toBe('');
});
