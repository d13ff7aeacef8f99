/**
 * What users install: each package packed as a tarball (publishConfig applied), unpacked into a fresh
 * node_modules, and loaded from CommonJS and from ESM. The public export lists are pinned here, so a
 * change to the API is a deliberate change to this file.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const PACKAGES = ['core', 'express', 'fastify', 'fetch', 'graphql', 'hono', 'koa', 'nestjs', 'otel'] as const;

const KEY_HELPERS = [
  'ClientAddressError',
  'MemoryStore',
  'RateLimitError',
  'RedisStore',
  'TollgateError',
  'byApiKey',
  'byIp',
  'byUser',
  'firstOf',
];
const EXPECTED_EXPORTS: Record<(typeof PACKAGES)[number], string[]> = {
  core: [
    ...KEY_HELPERS,
    'BREAKER_CLOSE_CHANNEL',
    'BREAKER_OPEN_CHANNEL',
    'COST_EXCEEDS_CAPACITY_TYPE',
    'DECISION_CHANNEL',
    'DENY_CACHE_HIT_CHANNEL',
    'PROBLEM_JSON',
    'QUOTA_EXCEEDED_TYPE',
    'STORE_ERROR_CHANNEL',
    'StoreUnavailableError',
    'TollgateOptionError',
    'TurnRefusedError',
    'costExceedsCapacityProblem',
    'createConcurrencyLimiter',
    'createLimiter',
    'hashIdentity',
    'ipIdentity',
    'parseDuration',
    'problemDetails',
    'quotaExceededProblem',
    'refusalStatus',
    'retryAfterSeconds',
    'subscribeTollgate',
  ].sort(),
  express: [...KEY_HELPERS, 'concurrencyLimit', 'rateLimit'].sort(),
  fastify: [...KEY_HELPERS, 'concurrencyLimit', 'tollgate'].sort(),
  fetch: [...KEY_HELPERS, 'concurrencyLimit', 'rateLimit', 'withConcurrencyLimit', 'withRateLimit'].sort(),
  graphql: [
    'CostLimitError',
    'MemoryStore',
    'RedisStore',
    'TollgateError',
    'apolloCostLimit',
    'costDirectives',
    'estimateCost',
    'mercuriusCostLimit',
    'useCostLimit',
  ],
  hono: [...KEY_HELPERS, 'concurrencyLimit', 'rateLimit'].sort(),
  koa: [...KEY_HELPERS, 'concurrencyLimit', 'rateLimit'].sort(),
  nestjs: [
    ...KEY_HELPERS,
    'GraphQLRateLimitError',
    'RateLimit',
    'RateLimitException',
    'SkipRateLimit',
    'TollgateGuard',
    'TollgateLimiters',
    'TollgateModule',
    'concurrencyLimit',
  ].sort(),
  otel: ['METER_NAME', 'METRIC_NAMES', 'instrumentTollgate'],
};

/** What `@tollgate/core/adapter` exports, for adapter authors (none of it is in the main entry). */
const ADAPTER_EXPORTS = [
  'adapterLimiterOf',
  'createAdapterLimiter',
  'RouteLimiters',
  'WebAnswer',
  'answersLeftmostForwarded',
  'concurrencyLifecycle',
  'createHeaderWriter',
  'createHttpConcurrencyLimiter',
  'createHttpLimiter',
  'endWithRejection',
  'groupKeyControls',
  'handledError',
  'keyControls',
  'mergeRateLimitOptions',
  'nodeRequestAccess',
  'nodeResponses',
  'rateLimitLifecycle',
  'stackHeaders',
  'suppliedAddressAccess',
  'validateInheritedOptions',
].sort();

let installDir: string;

async function tarballOf(name: string): Promise<string> {
  const tarballs = join(installDir, 'tarballs');
  return join(
    tarballs,
    (await readdir(tarballs)).find((file) => file.startsWith(`tollgate-${name}-`)) as string,
  );
}

/** Finds the directory of a dependency as a package of the workspace resolves it. */
function dependencyDir(fromPackage: string, dependency: string): string {
  const require = createRequire(join(root, fromPackage, 'package.json'));
  try {
    return dirname(require.resolve(`${dependency}/package.json`));
  } catch {
    // A package whose exports hide its package.json (@opentelemetry/api): its own node_modules entry.
    return join(root, fromPackage, 'node_modules', dependency);
  }
}

/** The package packed from a clean checkout: no `dist`, so only its `prepack` can put one in the tarball. */
const PACKED_CLEAN = 'core';

beforeAll(async () => {
  installDir = await mkdtemp(join(tmpdir(), 'tollgate-install-'));
  const tarballs = join(installDir, 'tarballs');
  await mkdir(join(installDir, 'node_modules', '@tollgate'), { recursive: true });
  for (const name of PACKAGES) {
    const cwd = join(root, 'packages', name);
    // One package is packed as from a fresh clone, running its prepack build. The others reuse the build
    // that `pnpm test` ran just before (their prepack is the same script), which keeps this file fast.
    if (name === PACKED_CLEAN) await rm(join(cwd, 'dist'), { recursive: true, force: true });
    const scripts = name === PACKED_CLEAN ? [] : ['--config.ignore-scripts=true'];
    await run('pnpm', ['pack', ...scripts, '--pack-destination', tarballs], { cwd });
    const target = join(installDir, 'node_modules', '@tollgate', name);
    await mkdir(target, { recursive: true });
    await run('tar', ['-xzf', await tarballOf(name), '-C', target, '--strip-components=1']);
  }
  // The peer and runtime dependencies, as the workspace has them installed.
  for (const [from, dependency] of [
    ['test', 'express'],
    ['test', 'fastify'],
    ['test', 'koa'],
    ['test', '@nestjs/common'],
    ['test', '@nestjs/core'],
    ['test', 'reflect-metadata'],
    ['test', 'rxjs'],
    ['test', 'hono'],
    ['packages/fastify', 'fastify-plugin'],
    ['packages/otel', '@opentelemetry/api'],
    ['packages/graphql', 'graphql'],
  ] as const) {
    const target = join(installDir, 'node_modules', dependency);
    await mkdir(dirname(target), { recursive: true });
    await symlink(dependencyDir(from, dependency), target, 'dir');
  }
}, 120_000);

afterAll(async () => {
  await rm(installDir, { recursive: true, force: true });
});

/** Loads every package in a fresh Node process and reports its export names, plus one real check. */
async function loadAll(format: 'cjs' | 'esm'): Promise<Record<string, string[]>> {
  const load = (specifier: string) =>
    format === 'cjs' ? `require(${specifier})` : `await import(${specifier})`;
  const fixture = `
    const exported = {};
    for (const name of ${JSON.stringify(PACKAGES)}) {
      exported[name] = Object.keys(${load("'@tollgate/' + name")}).filter((k) => k !== 'default' && k !== '__esModule').sort();
    }
    exported.adapter = Object.keys(${load("'@tollgate/core/adapter'")}).filter((k) => k !== 'default' && k !== '__esModule').sort();
    // What an adapter re-exports is the core's own: one RedisStore class, whichever package it came from.
    const core = ${load("'@tollgate/core'")};
    exported.foreign = [];
    for (const name of ${JSON.stringify(PACKAGES)}) {
      const pkg = ${load("'@tollgate/' + name")};
      for (const key of Object.keys(pkg)) if (key in core && pkg[key] !== core[key]) exported.foreign.push(name + '.' + key);
    }
    const { createLimiter } = core;
    const limiter = createLimiter({ policies: { limit: 1, window: '1m' } });
    exported.decisions = [(await limiter.consume('a')).allowed, (await limiter.consume('a')).allowed];
    // With no SDK, the metrics go to the API's no-op provider: instrumenting must still work.
    (${load("'@tollgate/otel'")}).instrumentTollgate().stop();
    console.log(JSON.stringify(exported));
  `;
  const file = join(installDir, format === 'cjs' ? 'fixture.cjs' : 'fixture.mjs');
  await writeFile(file, format === 'cjs' ? `(async () => {${fixture}})();` : fixture);
  const { stdout } = await run(process.execPath, [file], { cwd: installDir });
  return JSON.parse(stdout) as Record<string, string[]>;
}

describe('the published packages', () => {
  // `pnpm pack` and `pnpm publish` from a fresh clone used to ship package.json and README.md only.
  it('are built by prepack: packed from a clean checkout, the tarball holds both builds and typings', async () => {
    const { stdout } = await run('tar', ['-tzf', await tarballOf(PACKED_CLEAN)]);
    // Beside the entries, the chunks both entries share, named by their content's hash.
    const chunk = /-[\w-]{8}\.(?:d\.)?[cm][jt]s$/;
    const built = stdout.split('\n').filter((file) => file.startsWith('package/dist/') && !chunk.test(file));
    expect(built.sort()).toEqual([
      'package/dist/adapter.cjs',
      'package/dist/adapter.d.cts',
      'package/dist/adapter.d.mts',
      'package/dist/adapter.mjs',
      'package/dist/app-exports.cjs',
      'package/dist/app-exports.d.cts',
      'package/dist/app-exports.d.mts',
      'package/dist/app-exports.mjs',
      'package/dist/index.cjs',
      'package/dist/index.d.cts',
      'package/dist/index.d.mts',
      'package/dist/index.mjs',
    ]);
  });

  it.each(PACKAGES)('@tollgate/%s runs its build before every pack and publish', async (name) => {
    const manifest = JSON.parse(await readFile(join(root, 'packages', name, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(manifest.scripts).toMatchObject({ build: 'tsdown', prepack: 'pnpm run build' });
  });

  it.each(PACKAGES)('@tollgate/%s points its exports at files in the tarball', async (name) => {
    const manifest = JSON.parse(
      await readFile(join(installDir, 'node_modules', '@tollgate', name, 'package.json'), 'utf8'),
    ) as {
      exports: Record<string, { import: string; require: string }>;
      dependencies?: Record<string, string>;
    };
    const entry = manifest.exports['.'] as { import: string; require: string };
    expect(entry).toEqual({ import: './dist/index.mjs', require: './dist/index.cjs' });
    if (name !== 'core') expect(manifest.dependencies?.['@tollgate/core']).toMatch(/^\^\d/); // no workspace: protocol
  });

  it.each(PACKAGES)(
    '@tollgate/%s passes publint and are-the-types-wrong',
    async (name) => {
      const bin = (tool: string) => join(root, 'test', 'node_modules', '.bin', tool);
      // Both exit non-zero on a problem; execFile then rejects with their report.
      await run(bin('publint'), ['--strict', join(installDir, 'node_modules', '@tollgate', name)]);
      await run(bin('attw'), [await tarballOf(name), '--format', 'ascii']);
    },
    60_000,
  );

  it.each(['cjs', 'esm'] as const)('load from %s with the pinned export lists, and work', async (format) => {
    const loaded = await loadAll(format);
    expect(loaded.decisions).toEqual([true, false]);
    expect(loaded.foreign).toEqual([]);
    for (const name of PACKAGES) expect(loaded[name], `@tollgate/${name}`).toEqual(EXPECTED_EXPORTS[name]);
    expect(loaded.adapter, '@tollgate/core/adapter').toEqual(ADAPTER_EXPORTS);
  });
});
