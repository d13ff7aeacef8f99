/**
 * @tollgate/fetch and @tollgate/hono on `Bun.serve`: the runtime suite's table on every store, and the
 * app and the READMEs' Bun blocks type-checked with Bun's types.
 */
import { beforeAll, expect, it } from 'vitest';
import { bun } from './runtime-process.js';
import { runtimeSuite } from './runtime-suite.js';
import { checkWithBunTypes, readmeBlocks, writeBlocks } from './runtime-typecheck.js';

const suite = runtimeSuite(bun, 'bun-server.ts');
const blocks = readmeBlocks('Bun');
let checked: Promise<string>;

// The compiler runs while the servers answer the table: it has a process of its own.
beforeAll(async () => {
  const project = suite.project();
  checked = checkWithBunTypes(project, ['bun-server.ts', ...(await writeBlocks(project, blocks))]);
});

it("the app and the READMEs' Bun blocks, as written, type-check with Bun's types", async () => {
  // One block in each README: fetch's and Hono's.
  expect(blocks.map(({ where }) => where.split(':')[0])).toEqual([
    'packages/fetch/README.md',
    'packages/hono/README.md',
  ]);
  expect(await checked).toBe('');
});
