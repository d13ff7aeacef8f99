/**
 * A copy of examples/next as a user's app holds it, for one test run: the example's files, extra routes
 * (the READMEs' quick starts), and @tollgate/core and @tollgate/fetch as they are published, each built by
 * its own tsdown config under its package.json with publishConfig applied. So `next build` compiles the
 * app against the packages' typings, under the tsconfig.json Next.js writes for an app that has none.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cp, mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The repository's root. */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The example, and the Next.js it installs. */
export const EXAMPLE = join(ROOT, 'examples', 'next');
/** Where each run's copy goes: inside the example, so `next`, `react` and `typescript` resolve as there. */
const BUILDS = join(EXAMPLE, '.test-builds');

/** The example's own files that a user's app would not have, or that each copy has its own of. */
const NOT_COPIED = new Set(['node_modules', '.next', '.test-builds', 'next-env.d.ts', 'tsconfig.json']);

/** A route handler added to the copy: `app/<path>/route.ts`. */
export interface ExtraRoute {
  readonly path: string;
  readonly code: string;
}

/** The copy of one run. */
export interface NextAppCopy {
  readonly dir: string;
  /** `next build --webpack`, as `pnpm start` runs it; rejects with the build's output if it fails. */
  build(): Promise<string>;
  remove(): Promise<void>;
}

/** `next`'s command line, run with this Node.js. */
export const NEXT_BIN = createRequire(join(EXAMPLE, 'package.json')).resolve('next/dist/bin/next');

/** Environment for `next`: no telemetry banner, nothing sent. */
export const NEXT_ENV = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };

/** Copies the example with `routes` added, into a folder of this run's own. */
export async function assembleNextApp(routes: readonly ExtraRoute[]): Promise<NextAppCopy> {
  const dir = join(BUILDS, `${process.pid}-${randomUUID().slice(0, 8)}`);
  await mkdir(dir, { recursive: true });
  const copy: NextAppCopy = {
    dir,
    build: () => buildApp(dir),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
  // All settled before the copy is removed on a failure: one step must not write into a removed folder.
  const steps = await Promise.allSettled([
    copyExample(dir, routes),
    publishedPackage('core', dir),
    publishedPackage('fetch', dir),
    exampleSupport(dir),
  ]);
  const failed = steps.find((step) => step.status === 'rejected');
  if (failed !== undefined) {
    await copy.remove();
    throw failed.reason;
  }
  return copy;
}

async function copyExample(dir: string, routes: readonly ExtraRoute[]): Promise<void> {
  for (const entry of await readdir(EXAMPLE)) {
    if (!NOT_COPIED.has(entry)) await cp(join(EXAMPLE, entry), join(dir, entry), { recursive: true });
  }
  // An app of its own, not a second @tollgate/example-next in the workspace's eyes.
  await writeFile(join(dir, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  for (const route of routes) {
    await mkdir(join(dir, 'app', route.path), { recursive: true });
    await writeFile(join(dir, 'app', route.path, 'route.ts'), route.code);
  }
}

/**
 * `@tollgate/<name>` as `pnpm publish` ships it, in the copy's node_modules. Built here rather than taken
 * from the package's dist, which other suites of the same run may be rebuilding at this moment.
 */
async function publishedPackage(name: string, dir: string): Promise<void> {
  const source = join(ROOT, 'packages', name);
  const target = join(dir, 'node_modules', '@tollgate', name);
  const manifest = JSON.parse(await readFile(join(source, 'package.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  const { publishConfig, scripts: _scripts, devDependencies: _dev, ...published } = manifest;
  await mkdir(target, { recursive: true });
  await writeFile(
    join(target, 'package.json'),
    JSON.stringify({ ...published, ...(publishConfig as object) }, null, 2),
  );
  const tsdown = await binOf(source, 'tsdown');
  await run(process.execPath, [tsdown, '--out-dir', join(target, 'dist'), '--log-level', 'error'], {
    cwd: source,
  });
}

/** The example's store helper (TypeScript, compiled with the app), and the ioredis it imports. */
async function exampleSupport(dir: string): Promise<void> {
  const source = join(ROOT, 'examples', 'support');
  const target = join(dir, 'node_modules', '@tollgate', 'example-support');
  await mkdir(target, { recursive: true });
  await cp(join(source, 'store.ts'), join(target, 'store.ts'));
  await writeFile(
    join(target, 'package.json'),
    JSON.stringify({
      name: '@tollgate/example-support',
      type: 'module',
      exports: { './store': './store.ts' },
    }),
  );
  const ioredis = dirname(createRequire(join(source, 'package.json')).resolve('ioredis/package.json'));
  await symlink(ioredis, join(dir, 'node_modules', 'ioredis'), 'dir');
}

/** The script of a package's command-line tool, as `source` resolves the package. */
async function binOf(source: string, name: string): Promise<string> {
  const manifestPath = createRequire(join(source, 'package.json')).resolve(`${name}/package.json`);
  const { bin } = JSON.parse(await readFile(manifestPath, 'utf8')) as {
    bin: string | Record<string, string>;
  };
  return join(dirname(manifestPath), typeof bin === 'string' ? bin : (bin[name] as string));
}

async function buildApp(dir: string): Promise<string> {
  try {
    const { stdout, stderr } = await run(process.execPath, [NEXT_BIN, 'build', '--webpack'], {
      cwd: dir,
      env: NEXT_ENV,
      maxBuffer: 16 * 1024 * 1024,
    });
    return `${stdout}${stderr}`;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`next build failed:\n${stdout}${stderr}`);
  }
}
