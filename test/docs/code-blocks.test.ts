/**
 * Every ```ts (or ```typescript) block of README.md, packages/*\/README.md and docs/*.md compiles against
 * Tollgate's real API: the workspace packages' sources and the frameworks `test/` installs, as strict as
 * `test/tsconfig.json`. Each block is a module of its own, all checked in one TypeScript Program (NestJS's
 * in a second: it must not see the other adapters' `req.rateLimit`), and a failure names the block's file
 * and line with the compiler's message.
 *
 * A block is a complete module, checked as it is, unless an HTML comment right before it says otherwise:
 *
 * - `<!-- snippet: fragment express -->`: a fragment of an app. It may use, without declaring them, the
 *   names `test/docs/fragments/express.ts` exports (`rateLimit`, `app`, `store`, `login`, …), as if it
 *   imported them; a name it declares or imports itself is its own. One context per package: core,
 *   express, fastify, fetch, hono, koa, nestjs. A name no context has is declared in the block, or added
 *   to its context if other fragments need it too.
 * - `<!-- snippet: not-checked: why -->`: not checked, for the reason given: another library's API (a
 *   migration guide's "before"), or an option's signature shown alone. Code that is not TypeScript takes
 *   its own language (```js, ```sh, ```text) and is not read at all.
 *
 * `snippet-environment.ts` declares, as far as the docs use them, the few modules nothing in the workspace
 * installs (`@nestjs/config`, …), and what an app's other libraries add to every block's frameworks:
 * `req.user` (Express, Fastify), as an authentication library would, and Koa's `ctx.request.body`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { type CodeBlock, codeBlocksOf } from './markdown-code-blocks.js';
import { type Snippet, type SnippetProblem, typeCheckSnippets } from './type-check-snippets.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

function markdownFiles(): string[] {
  const packages = readdirSync(join(root, 'packages'))
    .map((name) => join('packages', name, 'README.md'))
    .filter((path) => existsSync(join(root, path)));
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name));
  return ['README.md', ...packages, ...docs];
}

const TYPESCRIPT = new Set(['ts', 'typescript']);

/** What a marker asks of its block: to be checked (with a fragment context or none), or not, and why. */
type Reading = { check: true; context?: string } | { check: false; reason: string } | { problem: string };

function readMarker(block: CodeBlock): Reading {
  const { marker } = block;
  if (marker === undefined) return { check: true };
  if (!TYPESCRIPT.has(block.lang)) return { problem: 'a snippet marker goes before a ```ts block only' };
  const fragment = /^fragment\s+([\w-]+)$/.exec(marker);
  if (fragment?.[1] !== undefined) return { check: true, context: fragment[1] };
  const notChecked = /^not-checked(?::\s*(.*))?$/.exec(marker);
  if (notChecked !== null) {
    const reason = notChecked[1]?.trim() ?? '';
    return reason === ''
      ? { problem: 'not-checked needs a reason: `not-checked: why`' }
      : { check: false, reason };
  }
  return { problem: `unknown snippet marker '${marker}': 'fragment <context>' or 'not-checked: why'` };
}

/** The blocks to check, and the problems with their markers. */
function readSnippets(files: readonly string[]): { snippets: Snippet[]; problems: SnippetProblem[] } {
  const snippets: Snippet[] = [];
  const problems: SnippetProblem[] = [];
  for (const file of files) {
    for (const block of codeBlocksOf(readFileSync(join(root, file), 'utf8'))) {
      const reading = readMarker(block);
      if ('problem' in reading) {
        problems.push({ file, text: `${file}:${block.line} ${reading.problem}` });
      } else if (TYPESCRIPT.has(block.lang) && reading.check) {
        const { line, code, indent } = block;
        snippets.push({ file, line, code, indent, ...(reading.context && { context: reading.context }) });
      }
    }
  }
  return { snippets, problems };
}

describe('TypeScript blocks in the docs', () => {
  const files = markdownFiles();
  let problems: SnippetProblem[] = [];

  beforeAll(() => {
    const read = readSnippets(files);
    problems = [...read.problems, ...typeCheckSnippets(root, read.snippets)];
  }, 120_000);

  it.each(files)('%s: every ts block compiles', (file) => {
    expect(problems.filter((problem) => problem.file === file).map(({ text }) => text)).toEqual([]);
  });

  it('the fragment contexts compile, and so does the program around them', () => {
    const elsewhere = problems.filter((problem) => !files.includes(problem.file));
    expect(elsewhere.map(({ text }) => text)).toEqual([]);
  });
});

describe('codeBlocksOf', () => {
  it('reads each block with the marker before it, unindented as in a list item', () => {
    const markdown = [
      '# Title',
      '',
      '<!-- snippet: fragment express -->',
      '',
      '```ts',
      'app.use(rateLimit());',
      '```',
      '',
      '- a list item:',
      '',
      '  ```typescript',
      '  const a = 1;',
      '    const b = 2;',
      '  ```',
      '````md',
      '```ts',
      '````',
    ].join('\n');
    expect(codeBlocksOf(markdown)).toEqual([
      { line: 5, lang: 'ts', code: 'app.use(rateLimit());', indent: 0, marker: 'fragment express' },
      { line: 11, lang: 'typescript', code: 'const a = 1;\n  const b = 2;', indent: 2, marker: undefined },
      { line: 15, lang: 'md', code: '```ts', indent: 0, marker: undefined },
    ]);
  });
});

describe('readMarker', () => {
  const block = (marker: string | undefined, lang = 'ts'): CodeBlock => ({
    line: 1,
    lang,
    code: '',
    indent: 0,
    marker,
  });

  it('reads fragments and not-checked blocks, and wants a reason for the latter', () => {
    expect(readMarker(block(undefined))).toEqual({ check: true });
    expect(readMarker(block('fragment koa'))).toEqual({ check: true, context: 'koa' });
    expect(readMarker(block('not-checked: koa-ratelimit, not Tollgate'))).toEqual({
      check: false,
      reason: 'koa-ratelimit, not Tollgate',
    });
    expect(readMarker(block('not-checked'))).toHaveProperty('problem');
    expect(readMarker(block('skip'))).toHaveProperty('problem');
    expect(readMarker(block('fragment express', 'js'))).toHaveProperty('problem');
  });
});
