/**
 * The runtime suite of one runtime: the app of `runtime-apps/` in a project laid out as a user's, served
 * by one process on the MemoryStore and two sharing Redis per Redis client, every scenario of the table
 * through every adapter. The processes start once and serve every scenario (each has limiters of its
 * own), so the suite pays for a runtime's start five times, not once per scenario.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADAPTERS, STORE_KINDS, type StoreKind } from './runtime-apps/runtime-limits.js';
import { type InstalledProject, installProject } from './runtime-install.js';
import { type Runtime, runtimeEnv, type ServerProcess, startServer } from './runtime-process.js';
import { type AppServers, runtimeScenarios } from './runtime-scenarios.js';

/**
 * Declares the suite for `runtime`, whose servers run `entry` (a file of `runtime-apps/`). Returns what
 * the file's other tests may use once the suite's `beforeAll` has run.
 *
 * @example
 * const started = runtimeSuite(bun, 'bun-server.ts');
 */
export function runtimeSuite(runtime: Runtime, entry: string): { project(): InstalledProject } {
  let project: InstalledProject | undefined;
  const servers = new Map<StoreKind, ServerProcess[]>();

  beforeAll(async () => {
    project = await installProject();
    const { dir } = project;
    // One prefix for this run: the two processes of a client share their buckets, and nothing else does.
    const prefix = `test:runtimes:${runtime.name}:${randomUUID()}:`;
    const start = (storeKind: StoreKind) =>
      startServer(runtime.binary, runtime.runArgs(entry), {
        cwd: dir,
        env: runtimeEnv({
          TOLLGATE_STORE: storeKind,
          REDIS_URL: inject('redisUrl'),
          TOLLGATE_PREFIX: `${prefix}${storeKind}:`,
        }),
      });
    const started = STORE_KINDS.map(async (storeKind) => {
      const processes = await Promise.all(
        storeKind === 'memory' ? [start(storeKind)] : [start(storeKind), start(storeKind)],
      );
      servers.set(storeKind, processes);
    });
    // Every process is stopped in afterAll, those that started before another failed to included.
    const failed = (await Promise.allSettled(started)).find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  }, 120_000);

  afterAll(async () => {
    await Promise.all([...servers.values()].flat().map((server) => server.stop()));
    await project?.remove();
  });

  describe.each(STORE_KINDS)(`${runtime.name} on %s`, (storeKind) => {
    const appServers = (): AppServers => {
      const [first, ...others] = servers.get(storeKind) ?? [];
      if (first === undefined) throw new Error(`no ${storeKind} server started`);
      return { url: first.url, others };
    };

    describe.each(ADAPTERS)('through %s', (adapter) => {
      it.each(runtimeScenarios)('$name', ({ run }) => run(adapter, appServers()));
    });

    it('wrote no warning or error', () => {
      for (const server of servers.get(storeKind) ?? []) expect(server.stderr()).toBe('');
    });
  });

  return {
    project() {
      if (project === undefined) throw new Error('the suite has not started');
      return project;
    },
  };
}
