/**
 * The scripts the Redis store runs, and how to read their answers: the one that settles checks (all
 * algorithms) and the one that takes and ends leases.
 */
import { createHash } from 'node:crypto';
import { CONCURRENCY_LUA } from '../../algorithms/concurrency/concurrency.lua.js';
import { ALGORITHMS } from '../../algorithms/registry.js';
import { SCRIPT_LUA } from '../../algorithms/script.lua.js';
import type { ResolvedPolicy } from '../../policy.js';
import type { LuaScript } from './redis-client.js';

/** The script that settles a batch of checks. */
export const SETTLE_SCRIPT = luaScript(SCRIPT_LUA);
/** The script that takes or ends a lease. */
export const LEASE_SCRIPT = luaScript(CONCURRENCY_LUA);

function luaScript(source: string): LuaScript {
  return { source, sha1: createHash('sha1').update(source).digest('hex') };
}

/** An answer's first field for a check that ran past its deadline and changed nothing. */
export const EXPIRED = -1;
/** …and for a check whose key Redis refused (another type, no memory to write): it changed nothing. */
export const REFUSED = -2;

/** Redis refused one check's key (WRONGTYPE, OOM): the other checks of its batch were decided. */
export class RefusedCheckError extends Error {
  override readonly name = 'ReplyError';
}

/**
 * The policies' states in a check's answer (from `answers[at]`, its `applied`): each policy's fields,
 * in policy order.
 */
export function statesOf(
  policies: readonly ResolvedPolicy[],
  answers: readonly unknown[],
  at: number,
): number[][] {
  let field = at + 1;
  return policies.map((policy) => {
    const { fields } = ALGORITHMS[policy.algorithm];
    const state = new Array<number>(fields);
    for (let k = 0; k < fields; k++) state[k] = Number(answers[field + k]);
    field += fields;
    return state;
  });
}

/** When the client's ban ends, in a check's answer of a set with a ban: its field after the states. */
export function bannedUntil(states: readonly number[][], answers: readonly unknown[], at: number): number {
  let field = at + 1;
  for (const state of states) field += state.length;
  return Number(answers[field]);
}
