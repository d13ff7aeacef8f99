/**
 * A project in a temporary directory, laid out as a user's after `npm install`: `@tollgate/core`,
 * `@tollgate/fetch` and `@tollgate/hono` as published (their built `dist`, the package.json their
 * `publishConfig` makes), hono, ioredis and node-redis beside them, and the runtime suite's app files.
 * Bun and Deno resolve the app's imports there as they would in the user's project.
 */
import { cp, mkdir, mkdtemp, readFile, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = join(here, '../..');

/** The packages the app imports, published from this workspace. */
const TOLLGATE_PACKAGES = ['core', 'fetch', 'hono'] as const;

/** Packages from the registry the app (or a type check) imports, as test/runtimes installed them. */
const REGISTRY_PACKAGES = ['hono', 'ioredis', 'redis', '@types/bun'] as const;

/** A user's project with the Tollgate packages installed. */
export interface InstalledProject {
  readonly dir: string;
  /** Writes `text` to `name` in the project, for a file to check or run there. */
  write(name: string, text: string): Promise<string>;
  remove(): Promise<void>;
}

/**
 * Lays out the project, with `runtime-apps/*.ts` at its top. Fails when a package was not built: the
 * runtimes import the built files.
 *
 * @example
 * const project = await installProject();
 * spawn(bunBinary, [join(project.dir, 'bun-server.ts')]);
 */
export async function installProject(): Promise<InstalledProject> {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-runtimes-'));
  try {
    const dependencies: Record<string, string> = {};
    for (const name of TOLLGATE_PACKAGES) {
      const manifest = await publish(name, join(dir, 'node_modules/@tollgate', name));
      dependencies[`@tollgate/${name}`] = manifest.version;
    }
    for (const name of REGISTRY_PACKAGES) {
      const target = join(dir, 'node_modules', name);
      await mkdir(dirname(target), { recursive: true });
      await symlink(await realpath(join(here, 'node_modules', name)), target);
    }
    const manifest = { name: 'tollgate-runtime-app', private: true, type: 'module', dependencies };
    await writeFile(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    await cp(join(here, 'runtime-apps'), dir, { recursive: true });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    dir,
    async write(name, text) {
      const path = join(dir, name);
      await writeFile(path, text);
      return path;
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

interface Manifest {
  version: string;
  dependencies?: Record<string, string>;
  publishConfig?: Record<string, unknown>;
  devDependencies?: unknown;
  scripts?: unknown;
}

/** Installs `packages/<name>` at `target` as `pnpm publish` would: `dist`, and its publishConfig applied. */
async function publish(name: string, target: string): Promise<Manifest> {
  const source = join(root, 'packages', name);
  await assertBuilt(source);
  const manifest = JSON.parse(await readFile(join(source, 'package.json'), 'utf8')) as Manifest;
  const { publishConfig, devDependencies: _dev, scripts: _scripts, ...published } = manifest;
  const dependencies = Object.fromEntries(
    Object.entries(published.dependencies ?? {}).map(([dependency, range]) => [
      dependency,
      range.replace(/^workspace:/, ''),
    ]),
  );
  await mkdir(target, { recursive: true });
  await writeFile(
    join(target, 'package.json'),
    JSON.stringify({ ...published, ...publishConfig, dependencies }, null, 2),
  );
  await cp(join(source, 'dist'), join(target, 'dist'), { recursive: true });
  return manifest;
}

/** Throws unless the package was built: the runtimes import its `dist`, as users do. */
async function assertBuilt(source: string): Promise<void> {
  const built = await stat(join(source, 'dist/index.mjs')).catch(() => undefined);
  if (built === undefined)
    throw new Error(`${source} is not built: run pnpm turbo run build --filter=./packages/*`);
}
