/**
 * The floors: the smallest scripts that run an algorithm's Redis commands (the Lua in `floors/`), sent by
 * EVALSHA through ioredis on keys as long as Tollgate's; and a plain INCR, no script. What a row costs
 * above its floor is what its library does beyond those commands.
 */
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import type { CostDriver, FloorName } from './cost-types.js';
import { ALL_SHAPES } from './shapes.js';

const WINDOW_MS = 60_000;

/** A floor script, and what it stands for. */
interface FloorScript {
  readonly name: FloorName;
  readonly algorithms: string;
  readonly file: string;
}

const SCRIPTS: readonly FloorScript[] = [
  { name: 'TIME, GET, SET PX', algorithms: 'token bucket, sliding window', file: 'time-get-set.lua' },
  { name: 'INCR, PEXPIRE', algorithms: 'fixed window; PEXPIRE on a new key only', file: 'incr-pexpire.lua' },
];

/**
 * A key as long as Tollgate's for the same client: its prefix, the client id as a Cluster hash tag, and
 * the policy set's 12-character name (see RedisStore's `#keyOf`).
 */
export function tollgateLengthKey(owner: string): string {
  return `tollgate:{${owner}}:floorfloor12`;
}

/** The floors' drivers, on `clients.pipelined`. */
export function floorDrivers(): CostDriver[] {
  const scripted = SCRIPTS.map(
    (script): CostDriver => ({
      label: `floor: ${script.name} (${script.algorithms})`,
      family: 'floor',
      floor: script.name,
      shapes: ALL_SHAPES,
      async open({ pipelined: redis }) {
        const sha = await loadScript(redis, script.file);
        return {
          check: async (owner) =>
            Number(await redis.evalsha(sha, 1, tollgateLengthKey(owner), WINDOW_MS)) > 0,
        };
      },
    }),
  );
  const incr: CostDriver = {
    label: 'floor: plain INCR (no script)',
    family: 'floor',
    floor: undefined,
    shapes: ALL_SHAPES,
    open: async ({ pipelined: redis }) => ({
      check: async (owner) => (await redis.incr(tollgateLengthKey(owner))) > 0,
    }),
  };
  return [...scripted, incr];
}

async function loadScript(redis: Redis, file: string): Promise<string> {
  const lua = readFileSync(new URL(`./floors/${file}`, import.meta.url), 'utf8');
  return String(await redis.script('LOAD', lua));
}
