/**
 * The Next.js files the READMEs show, found by the comment that opens each block and names the file:
 * `// app/api/hello/route.ts, on Vercel` and `// app/api/hello/route.ts, on next start behind your
 * reverse proxy` are quick starts, which the test serves as routes of their own; a file named alone
 * (`// proxy.ts`) is one of examples/next, which it must equal, so that it too runs as written.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { codeBlocksOf } from '../../docs/markdown-code-blocks.js';
import { EXAMPLE, ROOT } from './assemble.js';

/** Where a quick start runs, which decides how the test reaches it. */
export type QuickStartKind = 'vercel' | 'behind-proxy';

/** A block of a README that is a Next.js file. */
export interface NextBlock {
  /** `README.md:112`: the README and the line of the block's opening fence. */
  readonly where: string;
  /** The file it names: `app/api/hello/route.ts`. */
  readonly path: string;
  /** A quick start's kind, or `'example'` for a file of examples/next. */
  readonly kind: QuickStartKind | 'example';
  /** The code, the naming comment included. */
  readonly code: string;
}

const NAMING_COMMENT = /^\/\/ ([\w./[\]-]+\.tsx?)(?:, (.+))?$/;

const KINDS: readonly [QuickStartKind, RegExp][] = [
  ['vercel', /^on Vercel$/],
  ['behind-proxy', /^on next start behind your reverse proxy$/],
];

/**
 * The Next.js blocks of a README (a path from the repository's root): every TypeScript block whose first
 * line names a file of a Next.js app, `app/…` or one of examples/next. Throws on a block that names one
 * with words this test does not know, so a quick start cannot drop out of the test unnoticed.
 */
export function nextBlocksOf(readme: string): NextBlock[] {
  const blocks: NextBlock[] = [];
  for (const block of codeBlocksOf(readFileSync(join(ROOT, readme), 'utf8'))) {
    if (block.lang !== 'ts' && block.lang !== 'typescript') continue;
    const naming = NAMING_COMMENT.exec(block.code.split('\n')[0] ?? '');
    const [, path = '', words] = naming ?? [];
    if (naming === null || !(path.startsWith('app/') || existsSync(join(EXAMPLE, path)))) continue;
    const where = `${readme}:${block.line}`;
    const kind =
      words === undefined ? 'example' : KINDS.find(([, pattern]) => pattern.test(words.trim()))?.[0];
    if (kind === undefined) {
      throw new Error(`${where}: a Next.js file "${words}" that no test runs: ${KINDS.map(([, p]) => p)}`);
    }
    blocks.push({ where, path, kind, code: block.code });
  }
  return blocks;
}

/** The example's file a block names, as the block shows it: without its opening doc comment. */
export function exampleFileAsShown(path: string): string {
  const source = readFileSync(join(EXAMPLE, path), 'utf8');
  return source.replace(/^\/\*\*[\s\S]*?\*\/\n/, '').trim();
}

/** A block's code after the comment that names its file. */
export function codeAfterName(block: NextBlock): string {
  return block.code.split('\n').slice(1).join('\n').trim();
}
