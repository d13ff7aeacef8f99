/**
 * Type checks with each runtime's own types, in a project laid out as a user's: the app files of
 * `runtime-apps/`, and the READMEs' Bun and Deno blocks as written. Those blocks use Bun's or Deno's
 * globals, which the docs' own check (test/docs, Node.js types) does not have, so their marker sends them
 * here: `<!-- snippet: not-checked: …; test/runtimes checks it with Bun's types -->`, or `with deno check`.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { codeBlocksOf } from '../docs/markdown-code-blocks.js';
import type { InstalledProject } from './runtime-install.js';
import { deno, runtimeEnv } from './runtime-process.js';

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('../../', import.meta.url));

/** The READMEs whose blocks may be checked here. */
const READMES = ['packages/fetch/README.md', 'packages/hono/README.md'] as const;

/** A README block checked here, and where it is. */
export interface ReadmeBlock {
  /** `packages/fetch/README.md:123`: the line of its opening fence. */
  readonly where: string;
  readonly code: string;
}

/** The blocks of the READMEs whose marker sends them to `runtime`'s check. */
export function readmeBlocks(runtime: 'Bun' | 'Deno'): ReadmeBlock[] {
  const checkedBy =
    runtime === 'Bun'
      ? "test/runtimes checks it with Bun's types"
      : 'test/runtimes checks it with deno check';
  return READMES.flatMap((file) =>
    codeBlocksOf(readFileSync(join(root, file), 'utf8'))
      .filter((block) => block.marker?.endsWith(checkedBy))
      .map((block) => ({ where: `${file}:${block.line}`, code: block.code })),
  );
}

/**
 * Writes each block into the project as a module of its own, named after where it is, and returns the
 * file names.
 */
export async function writeBlocks(
  project: InstalledProject,
  blocks: readonly ReadmeBlock[],
): Promise<string[]> {
  const names = blocks.map(({ where }) => `readme-${where.replace(/[^\w]+/g, '-')}.ts`);
  await Promise.all(blocks.map((block, index) => project.write(names[index] as string, `${block.code}\n`)));
  return names;
}

/**
 * Type-checks `files` of the project with TypeScript and Bun's types (`@types/bun`), as strict as the
 * workspace. Resolves to the compiler's messages, `''` when there are none.
 */
export async function checkWithBunTypes(
  project: InstalledProject,
  files: readonly string[],
): Promise<string> {
  const tsconfig = {
    extends: join(root, 'tsconfig.base.json'),
    compilerOptions: { types: ['bun'], allowImportingTsExtensions: true },
    files,
  };
  await project.write('tsconfig.bun.json', JSON.stringify(tsconfig, null, 2));
  const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
  return compilerOutput(run(process.execPath, [tsc, '-p', 'tsconfig.bun.json'], { cwd: project.dir }));
}

/** `deno check` of `files` of the project, reading its node_modules. Resolves to its messages on failure. */
export async function denoCheck(project: InstalledProject, files: readonly string[]): Promise<string> {
  return compilerOutput(
    run(deno.binary, ['check', '--quiet', '--node-modules-dir=manual', ...files], {
      cwd: project.dir,
      env: runtimeEnv(),
    }),
  );
}

/** What a compiler that exits non-zero on errors printed: `''` when it succeeded. */
async function compilerOutput(compiled: Promise<{ stdout: string; stderr: string }>): Promise<string> {
  try {
    await compiled;
    return '';
  } catch (error) {
    const {
      stdout = '',
      stderr = '',
      message,
    } = error as { stdout?: string; stderr?: string; message: string };
    return `${stdout}${stderr}`.trim() || message;
  }
}
