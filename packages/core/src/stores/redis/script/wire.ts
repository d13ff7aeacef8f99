/**
 * The Redis scripts' wire: the scripts the store runs, what it sends them and how it reads their answers.
 * Nothing else knows an ARGV position or a reply's layout.
 *
 * The settle script (`lua/settle.lua`, made by `generate.ts`) decides a batch of checks (a call of
 * one simple check goes to a single-check script instead, of its algorithm or its pair of algorithms,
 * `single-check.ts` and `policy-pair.ts`, or of one policy with a ban, `ban-check.ts`; and a call of
 * simple checks alike but for their key to a batch script, `batch-check.ts` or, with a ban,
 * `ban-check.ts`; each answers as the settle script would):
 *
 * KEYS[c]   the states of check c's policies: a string of numbers joined by ':', each policy's fields in
 *           policy order (how many, and what they mean, is its algorithm's), then, with a ban, the ban's
 *           two, then, with exponentialBackoff, the backoff's three (`algorithms/backoff/backoff.ts`). Missing: all fresh. (On a Cluster, one batch is one slot.) A key may come more than once:
 *           its checks are decided in order, each seeing the one before, and it is read and written once.
 * ARGV      the policy sets, then the check shapes, then the checks:
 *   S                          how many policy sets follow
 *   per set: n, then per policy: algorithm code, its state's field count, limit, windowMs, capacityUnits;
 *            then the ban: refusals in a row that start one (0: no ban), and how long it lasts in ms;
 *            then the rules: 1 for exponentialBackoff + 2 for continueExceeding + 4 for overrides (0: none)
 *   K                          how many shapes follow: checks of a batch are mostly alike, so what they
 *                              share is sent, and read, once
 *   per shape: set (1-based), now, deadline, cost, mode, since
 *     now       ms, or '' to read the Redis server's own clock (one timeline for all app servers)
 *     deadline  ms by that clock, or '' for none: a check that runs later (the client gave up on it and
 *               decided without the store) changes nothing and answers -1
 *     cost      tokens, > 0;  mode  'consume', 'peek', 'refund', 'penalty' or 'wait'
 *     since     for a refund, when the tokens it gives back were charged (ms by the script's clock), so
 *               that it gives back no more than that charge still holds; '' for now (the whole cost);
 *               for a wait, the most ms the caller waits
 *     'wait'    a consume that may wait (`BucketRequest.maxWaitMs`): charged, into debt, when every
 *               policy can cover the cost within `since` ms (the held path; answered as a consume)
 *   per check c, in KEYS order: its shape (1-based); none when K is 1 (every check is of that shape)
 *
 * Returns one flat array (a table per check would cost Redis about a tenth of the check): each shape's
 * now, then the checks' answers one after another, each starting with its status:
 *   1 or 0     applied or not, then every policy's state fields, then, if its set has a ban, when the
 *              client's ban ends (0: not banned), then, with exponentialBackoff, until when the client is
 *              held back (0 or past: it is not), then, if its set reads overrides, the override it was
 *              decided by, as stored (0: none)
 *   -1         (EXPIRED) alone: the check ran after its deadline and changed nothing
 *   -2, error  (REFUSED) Redis refused the check's key (a key of another type, no memory to write) and it
 *              changed nothing: scripts do not roll back, so one bad key must not fail the others' checks
 * Numbers are whole numbers as numbers, others as strings formatted with %.17g (a Lua number in a reply
 * is truncated to an integer). Every number the client decodes costs it, so nothing is answered twice.
 *
 * A key's override is stored beside its buckets, at `<KEYS[c]>:o` (the same hash tag, so the same Cluster
 * slot), as 'expires:limit:burst:…': when it ends (ms by the script's clock; 0: when it is removed),
 * then a limit and a burst (capacity in tokens) per policy, in policy order. The settle script reads it
 * for a set with overrides; the override script (`override-script.ts`) writes, removes and reads it. One
 * with a ttl is kept after its end (not in force), so that a state written under it is read in its terms.
 *
 * The lease script (`algorithms/concurrency/concurrency.lua.ts`, whose contract is at its top) takes or
 * ends a lease: `leaseArgs` and `leaseReplyOf` below.
 */
import { createHash } from 'node:crypto';
import { CONCURRENCY_LUA } from '../../../algorithms/concurrency/concurrency.lua.js';
import { refillBoundMs, withLimits } from '../../../algorithms/policies.js';
import { ALGORITHM_LUA, ALGORITHMS } from '../../../algorithms/registry.js';
import type { BanRule } from '../../../model/ban.js';
import type { AlgorithmName, ResolvedPolicy } from '../../../model/policy.js';
import type { BucketMode, BucketResult, OverrideResult } from '../../../model/store.js';
import type { LuaScript } from '../redis-client.js';
import {
  BAN_BATCH_CHECK_LUA,
  BAN_CHECK_LUA,
  BAN_HOT_CHECK_LUA,
  BATCH_CHECK_LUA,
  HOT_KEY_CHECK_LUA,
  OVERRIDABLE_BATCH_CHECK_LUA,
  OVERRIDABLE_CHECK_LUA,
  OVERRIDE_LUA,
  POLICIES_CHECK_LUA,
  POLICY_PAIR_BATCH_CHECK_LUA,
  POLICY_PAIR_CHECK_LUA,
  POLICY_PAIR_HOT_KEY_CHECK_LUA,
  SETTLE_LUA,
  SINGLE_CHECK_LUA,
} from './scripts.generated.js';
import { readsCapacity, readsCostInUnits } from './single-check.js';

/** The script that settles a batch of checks: the committed text, as reviewed. */
export const SETTLE_SCRIPT = luaScript(SETTLE_LUA);
/**
 * The scripts that settle a call of one simple check (see {@link isSingleCheck}), by algorithm, answering
 * as the settle script does.
 */
export const SINGLE_CHECK_SCRIPTS: Readonly<Record<AlgorithmName, LuaScript>> = {
  'token-bucket': luaScript(SINGLE_CHECK_LUA['token-bucket']),
  'fixed-window': luaScript(SINGLE_CHECK_LUA['fixed-window']),
  'sliding-window': luaScript(SINGLE_CHECK_LUA['sliding-window']),
};
/** The same, for a limiter that reads overrides: the key's override is read beside it. */
export const OVERRIDABLE_CHECK_SCRIPTS: Readonly<Record<AlgorithmName, LuaScript>> = {
  'token-bucket': luaScript(OVERRIDABLE_CHECK_LUA['token-bucket']),
  'fixed-window': luaScript(OVERRIDABLE_CHECK_LUA['fixed-window']),
  'sliding-window': luaScript(OVERRIDABLE_CHECK_LUA['sliding-window']),
};
/** The batch scripts for a limiter that reads overrides, by algorithm (see {@link batchCheckCall}). */
export const OVERRIDABLE_BATCH_CHECK_SCRIPTS: Readonly<Record<AlgorithmName, LuaScript>> = {
  'token-bucket': luaScript(OVERRIDABLE_BATCH_CHECK_LUA['token-bucket']),
  'fixed-window': luaScript(OVERRIDABLE_BATCH_CHECK_LUA['fixed-window']),
  'sliding-window': luaScript(OVERRIDABLE_BATCH_CHECK_LUA['sliding-window']),
};
/** The same, for a limiter that bans (with no penalty): the ban's state is kept after the policy's. */
export const BAN_CHECK_SCRIPTS: Readonly<Record<AlgorithmName, LuaScript>> = {
  'token-bucket': luaScript(BAN_CHECK_LUA['token-bucket']),
  'fixed-window': luaScript(BAN_CHECK_LUA['fixed-window']),
  'sliding-window': luaScript(BAN_CHECK_LUA['sliding-window']),
};
/**
 * The scripts that settle a batch of checks of one policy with a ban alike but for their key, each key
 * once (see {@link batchCheckCall}), by algorithm, answering as the settle script does with one shape.
 */
export const BAN_BATCH_CHECK_SCRIPTS: Readonly<Record<AlgorithmName, LuaScript>> = {
  'token-bucket': luaScript(BAN_BATCH_CHECK_LUA['token-bucket']),
  'fixed-window': luaScript(BAN_BATCH_CHECK_LUA['fixed-window']),
  'sliding-window': luaScript(BAN_BATCH_CHECK_LUA['sliding-window']),
};
/** The same for a batch whose checks are all on one key (see {@link batchCheckCall}). */
export const BAN_HOT_CHECK_SCRIPTS: Readonly<Record<AlgorithmName, LuaScript>> = {
  'token-bucket': luaScript(BAN_HOT_CHECK_LUA['token-bucket']),
  'fixed-window': luaScript(BAN_HOT_CHECK_LUA['fixed-window']),
  'sliding-window': luaScript(BAN_HOT_CHECK_LUA['sliding-window']),
};
/**
 * The scripts that settle a batch of simple checks of one policy alike but for their key, each key once
 * (see {@link batchCheckCall}), by algorithm, answering as the settle script does with one shape.
 */
export const BATCH_CHECK_SCRIPTS: Readonly<Record<AlgorithmName, LuaScript>> = {
  'token-bucket': luaScript(BATCH_CHECK_LUA['token-bucket']),
  'fixed-window': luaScript(BATCH_CHECK_LUA['fixed-window']),
  'sliding-window': luaScript(BATCH_CHECK_LUA['sliding-window']),
};
/** The same for a batch whose checks are all on one key (see {@link batchCheckCall}). */
export const HOT_KEY_CHECK_SCRIPTS: Readonly<Record<AlgorithmName, LuaScript>> = {
  'token-bucket': luaScript(HOT_KEY_CHECK_LUA['token-bucket']),
  'fixed-window': luaScript(HOT_KEY_CHECK_LUA['fixed-window']),
  'sliding-window': luaScript(HOT_KEY_CHECK_LUA['sliding-window']),
};
/** Scripts by the first policy's algorithm, then the second's. */
type ByPair = Readonly<Record<AlgorithmName, Readonly<Record<AlgorithmName, LuaScript>>>>;

/** The committed texts of a pair's scripts, by pair, as scripts. */
function byPair(texts: Readonly<Record<AlgorithmName, Readonly<Record<AlgorithmName, string>>>>): ByPair {
  return Object.fromEntries(
    Object.entries(texts).map(([first, seconds]) => [
      first,
      Object.fromEntries(Object.entries(seconds).map(([second, lua]) => [second, luaScript(lua)])),
    ]),
  ) as ByPair;
}

/**
 * The scripts that settle a call of one simple check of two policies, by the first policy's algorithm,
 * then the second's, answering as {@link POLICIES_CHECK_SCRIPT} does.
 */
export const POLICY_PAIR_CHECK_SCRIPTS: ByPair = byPair(POLICY_PAIR_CHECK_LUA);
/** The batch scripts of two policies, for checks each on a key of its own (see {@link batchCheckCall}). */
export const POLICY_PAIR_BATCH_CHECK_SCRIPTS: ByPair = byPair(POLICY_PAIR_BATCH_CHECK_LUA);
/** The batch scripts of two policies, for checks all on one key (see {@link batchCheckCall}). */
export const POLICY_PAIR_HOT_KEY_CHECK_SCRIPTS: ByPair = byPair(POLICY_PAIR_HOT_KEY_CHECK_LUA);
/** The script that settles a call of one simple check of three policies or more. */
export const POLICIES_CHECK_SCRIPT = luaScript(POLICIES_CHECK_LUA);
/** The script that takes or ends a lease. */
export const LEASE_SCRIPT = luaScript(CONCURRENCY_LUA);
/** The script that writes, removes or reads a key's override. */
export const OVERRIDE_SCRIPT = luaScript(OVERRIDE_LUA);

function luaScript(source: string): LuaScript {
  return { source, sha1: createHash('sha1').update(source).digest('hex') };
}

/** A check's status when it ran past its deadline and changed nothing; its answer has no other field. */
export const EXPIRED = -1;
/** …when Redis refused its key (another type, no memory to write): it changed nothing; then the error. */
export const REFUSED = -2;

/** One check for the settle script. */
export interface ScriptCheck {
  readonly key: string;
  readonly policies: readonly ResolvedPolicy[];
  /** The limiter's ban, if it has one. */
  readonly ban: BanRule | undefined;
  /** Whether the check reads its key's override. */
  readonly overrides: boolean;
  /** The store's clock, or `''` for the server's. */
  readonly nowArg: string;
  readonly cost: number;
  /** The request's mode, or `'wait'` for a consume that may wait. */
  readonly mode: BucketMode | 'wait';
  /**
   * For a refund, when the tokens it gives back were charged (ms by the script's clock), or `''`; for a
   * wait, the most ms it waits.
   */
  readonly sinceArg: string;
  readonly timeoutMs: number | undefined;
}

/**
 * `n, code, fields, limit, windowMs, capacityUnits, …, banAfter, banMs, rules`: a policy set as the
 * script reads it.
 */
export function policySetArgs(
  policies: readonly ResolvedPolicy[],
  ban: BanRule | undefined,
  overrides: boolean,
): string[] {
  const args = [String(policies.length)];
  for (const p of policies) {
    const { code, fields } = ALGORITHMS[p.algorithm];
    args.push(String(code), String(fields), String(p.limit), String(p.windowMs), String(p.capacityUnits));
  }
  const rules = (ban?.exponentialBackoff ? 1 : 0) + (ban?.continueExceeding ? 2 : 0) + (overrides ? 4 : 0);
  args.push(String(ban?.after ?? 0), String(ban?.durationMs ?? 0), String(rules));
  return args;
}

/**
 * The keys and arguments of one settle-script call, check by check: each policy set, and each check
 * shape (what checks share but their key), is written once, and each check names its shape.
 */
export class ScriptCall {
  readonly keys: string[] = [];
  // A set is the policies and the ban of one limiter: the ban rule, made once per limiter, names it (in
  // a map of its own for a limiter that reads overrides).
  readonly #sets = new Map<object, number>();
  readonly #overridableSets = new Map<object, number>();
  #setCount = 0;
  readonly #setArgs: string[] = [];
  readonly #shapes = new Map<string, number>();
  readonly #shapeArgs: string[] = [];
  readonly #checkArgs: string[] = [];
  readonly #setArgsOf: (check: ScriptCheck) => string[];
  readonly #deadlineOf: (check: ScriptCheck) => string;
  #previous: ScriptCheck | undefined;
  #shape = 0;
  #shapeArg = '';

  /** `setArgsOf`: a check's `policySetArgs` (a caller may cache them); `deadlineOf`: its deadline argument. */
  constructor(setArgsOf: (check: ScriptCheck) => string[], deadlineOf: (check: ScriptCheck) => string) {
    this.#setArgsOf = setArgsOf;
    this.#deadlineOf = deadlineOf;
  }

  /** How many check shapes the call has so far. */
  get shapes(): number {
    return this.#shapes.size;
  }

  /** Adds a check; its shape (1-based). */
  add(check: ScriptCheck): number {
    // Most of a batch is one shape, and checks of one shape mostly come one after another.
    if (this.#previous === undefined || !sameShape(check, this.#previous)) {
      this.#shape = this.#shapeOf(check);
      this.#shapeArg = String(this.#shape);
      this.#previous = check;
    }
    this.keys.push(check.key);
    this.#checkArgs.push(this.#shapeArg);
    return this.#shape;
  }

  /** `S, sets…, K, shapes…, checks…`, as the script reads them (no checks' shapes when there is one shape). */
  args(): string[] {
    const shapes = this.#shapes.size;
    const args = [String(this.#setCount), ...this.#setArgs, String(shapes), ...this.#shapeArgs];
    if (shapes > 1) for (const shape of this.#checkArgs) args.push(shape);
    return args;
  }

  #shapeOf(check: ScriptCheck): number {
    const setId = check.ban ?? check.policies;
    const sets = check.overrides ? this.#overridableSets : this.#sets;
    let set = sets.get(setId);
    if (set === undefined) {
      set = ++this.#setCount;
      sets.set(setId, set);
      this.#setArgs.push(...this.#setArgsOf(check));
    }
    const fields = [
      String(set),
      check.nowArg,
      this.#deadlineOf(check),
      String(check.cost),
      check.mode,
      check.sinceArg,
    ];
    const id = fields.join(' ');
    let shape = this.#shapes.get(id);
    if (shape === undefined) {
      shape = this.#shapes.size + 1;
      this.#shapes.set(id, shape);
      this.#shapeArgs.push(...fields);
    }
    return shape;
  }
}

/**
 * Whether a call of `check` alone may go to a single-check script: a consume with no penalty, and either
 * no ban and overrides to read only for one policy, or a ban of one policy and no overrides.
 */
export function isSingleCheck({ policies, ban, overrides, mode }: ScriptCheck): boolean {
  if (mode !== 'consume') return false;
  if (ban === undefined) return !overrides || policies.length === 1;
  return isPlainBan(ban) && policies.length === 1 && !overrides;
}

/** Whether a rule is a ban alone, with no penalty: what the ban's single-check scripts read. */
function isPlainBan({ after, exponentialBackoff, continueExceeding }: BanRule): boolean {
  return after > 0 && exponentialBackoff !== true && continueExceeding !== true;
}

/**
 * The single-check script of `check` (see {@link isSingleCheck}): its algorithm's (reading overrides or
 * not), its pair of algorithms', or the one for several policies.
 */
export function singleCheckScript({ policies, ban, overrides }: ScriptCheck): LuaScript {
  if (ban !== undefined) return BAN_CHECK_SCRIPTS[(policies[0] as ResolvedPolicy).algorithm];
  if (policies.length === 2) {
    const [first, second] = policies as readonly [ResolvedPolicy, ResolvedPolicy];
    return POLICY_PAIR_CHECK_SCRIPTS[first.algorithm][second.algorithm];
  }
  if (policies.length > 2) return POLICIES_CHECK_SCRIPT;
  const { algorithm } = policies[0] as ResolvedPolicy;
  return overrides ? OVERRIDABLE_CHECK_SCRIPTS[algorithm] : SINGLE_CHECK_SCRIPTS[algorithm];
}

/** A call of a batch script, and how its reply is read. */
export interface BatchCheckCall {
  readonly script: LuaScript;
  readonly keys: string[];
  readonly args: string[];
  /** Whether it reads its keys with one MGET, and answers Redis's refusal of it after the checks. */
  readonly readsAtOnce: boolean;
  /** Whether a check it applied and wrote in whole numbers is answered by the text written. */
  readonly textAnswers: boolean;
}

/**
 * The call of a batch script for `checks`, when there is one: two or more consumes of one or two
 * policies with no ban, penalty or override, of one limiter, alike in cost, clock and timeout (so in
 * deadline, being written together), either each on a key of its own or all on one key; of one policy
 * with a ban (no penalty), likewise; or of one policy with overrides to read, each on a key of its own
 * (see {@link isSingleCheck}). Its arguments are the first check's {@link singleCheckArgs} (after the
 * number of checks, for one key); with `readsAtOnce`, its reply is read by {@link batchCheckAnswers}.
 */
export function batchCheckCall(
  checks: readonly ScriptCheck[],
  deadlineArg: string,
): BatchCheckCall | undefined {
  const first = checks[0];
  if (checks.length < 2 || first === undefined) return undefined;
  const { policies, cost, nowArg, timeoutMs, key, ban, overrides } = first;
  if (policies.length > 2 || !isSingleCheck(first)) return undefined;
  let oneKey = true;
  for (const check of checks) {
    if (
      check.policies !== policies ||
      check.cost !== cost ||
      check.nowArg !== nowArg ||
      check.timeoutMs !== timeoutMs ||
      check.overrides !== overrides ||
      check.ban !== ban ||
      !isSingleCheck(check)
    ) {
      return undefined;
    }
    if (check.key !== key) oneKey = false;
  }
  const { algorithm } = policies[0] as ResolvedPolicy;
  if (ban !== undefined && oneKey) {
    const args = [String(checks.length), ...singleCheckArgs(first, deadlineArg)];
    const script = BAN_HOT_CHECK_SCRIPTS[algorithm];
    return { script, keys: [key], args, readsAtOnce: false, textAnswers: false };
  }
  if (ban !== undefined || overrides) {
    // One key's checks under overrides, each seeing the one before (an override's limits), and a key
    // that comes more than once but not in every check, go to the settle script.
    const keys = checks.map((check) => check.key);
    if (oneKey || new Set(keys).size !== keys.length) return undefined;
    const args = singleCheckArgs(first, deadlineArg);
    if (ban !== undefined) {
      return {
        script: BAN_BATCH_CHECK_SCRIPTS[algorithm],
        keys,
        args,
        readsAtOnce: true,
        textAnswers: false,
      };
    }
    const script = OVERRIDABLE_BATCH_CHECK_SCRIPTS[algorithm];
    return { script, keys, args, readsAtOnce: false, textAnswers: false };
  }
  const second = policies[1]?.algorithm;
  const args = singleCheckArgs(first, deadlineArg);
  if (oneKey) {
    const script =
      second === undefined
        ? HOT_KEY_CHECK_SCRIPTS[algorithm]
        : POLICY_PAIR_HOT_KEY_CHECK_SCRIPTS[algorithm][second];
    const hotArgs = [String(checks.length), ...args];
    return { script, keys: [key], args: hotArgs, readsAtOnce: false, textAnswers: false };
  }
  const keys = checks.map((check) => check.key);
  if (new Set(keys).size !== keys.length) return undefined;
  const script =
    second === undefined
      ? BATCH_CHECK_SCRIPTS[algorithm]
      : POLICY_PAIR_BATCH_CHECK_SCRIPTS[algorithm][second];
  return { script, keys, args, readsAtOnce: true, textAnswers: true };
}

/** The single-check scripts' policy arguments, made once per set of policies. */
const singlePolicyArgs = new WeakMap<readonly ResolvedPolicy[], readonly string[]>();

/**
 * A single-check script's ARGV for `check` (see {@link isSingleCheck}): for one policy its limit and
 * windowMs (and capacityUnits, for an algorithm that reads it), for two the same per policy, for more
 * {@link policiesCheckArgs}; then, with a ban, its refusals in a row and its ms; then the cost, the
 * deadline, and now unless it is the server's. A script that reads the cost only in units
 * (`readsCostInUnits`) is sent no windowMs, and the cost times windowMs.
 */
export function singleCheckArgs(check: ScriptCheck, deadlineArg: string): string[] {
  const { policies, overrides } = check;
  const policy = policies[0] as ResolvedPolicy;
  const units = policies.length === 1 && !overrides && readsCostInUnits(ALGORITHMS[policy.algorithm]);
  const cache = units ? singleUnitsPolicyArgs : singlePolicyArgs;
  let policyArgs = cache.get(policies);
  if (policyArgs === undefined) {
    policyArgs =
      policies.length === 1
        ? onePolicyArgs(policy, units)
        : policies.length === 2
          ? policies.flatMap((each) => onePolicyArgs(each, false))
          : policiesCheckArgs(policies);
    cache.set(policies, policyArgs);
  }
  const args = [...policyArgs];
  if (check.ban !== undefined) args.push(String(check.ban.after), String(check.ban.durationMs));
  args.push(String(units ? check.cost * policy.windowMs : check.cost), deadlineArg);
  if (check.nowArg !== '') args.push(check.nowArg);
  return args;
}

/**
 * The policies as the single-check script of several policies reads them: `n`, then per policy its
 * code, limit and windowMs, and capacityUnits for an algorithm that reads it.
 */
function policiesCheckArgs(policies: readonly ResolvedPolicy[]): string[] {
  const args = [String(policies.length)];
  for (const p of policies) {
    const algorithm = ALGORITHMS[p.algorithm];
    args.push(String(algorithm.code), String(p.limit), String(p.windowMs));
    if (readsCapacity(algorithm)) args.push(String(p.capacityUnits));
  }
  return args;
}

/** {@link singlePolicyArgs} of the scripts sent the cost in units: without the window. */
const singleUnitsPolicyArgs = new WeakMap<readonly ResolvedPolicy[], readonly string[]>();

function onePolicyArgs(
  { algorithm, limit, windowMs, capacityUnits }: ResolvedPolicy,
  units: boolean,
): string[] {
  const args = units ? [String(limit)] : [String(limit), String(windowMs)];
  if (readsCapacity(ALGORITHMS[algorithm])) args.push(String(capacityUnits));
  return args;
}

/**
 * A single-check script's reply (see {@link singleCheckScript}) as the other scripts answer: `{ now, then
 * the check's answer }`. A check applied and written in whole numbers is answered as text: its fields,
 * then now as ms, or the server's seconds and microseconds, or nothing where the algorithm's `nowField`
 * holds it.
 */
export function singleCheckAnswers(reply: unknown, { policies }: ScriptCheck): unknown[] {
  if (typeof reply !== 'string') return reply as unknown[];
  const { algorithm } = policies[0] as ResolvedPolicy;
  let fields = 0;
  for (const policy of policies) fields += ALGORITHMS[policy.algorithm].fields;
  const parts = reply.split(':').map(Number);
  let nowMs: number;
  if (parts.length === fields + 2) {
    nowMs = (parts[fields] as number) * 1000 + Math.floor((parts[fields + 1] as number) / 1000);
  } else if (parts.length === fields + 1) {
    nowMs = parts[fields] as number;
  } else {
    // Only a script of one policy whose algorithm has a nowField answers its fields alone.
    const nowField = ALGORITHM_LUA.get(ALGORITHMS[algorithm])?.nowField as number;
    nowMs = parts[nowField - 1] as number;
  }
  const answers: unknown[] = [nowMs, 1];
  for (let k = 0; k < fields; k++) answers.push(parts[k]);
  return answers;
}

/**
 * The reply of a batch script that reads its keys with one MGET (see {@link batchCheckCall}) to `count`
 * checks like `check`, as the settle script answers; with `texted`, a check answered by the text written
 * ('f1:f2…', applied) as 1 and its fields. `unread`: why Redis refused the MGET (the keys were then read
 * one by one), which the script answers after the checks.
 */
export function batchCheckAnswers(
  reply: unknown,
  check: ScriptCheck,
  count: number,
  texted: boolean,
): { answers: unknown[]; unread: string | undefined } {
  const answers = reply as unknown[];
  if (!texted) {
    let end = 1;
    for (let c = 0; c < count; c++) end += answerLength(answers, end, check);
    return { answers, unread: end < answers.length ? String(answers[end]) : undefined };
  }
  const { policies } = check;
  let fields = 0;
  for (const policy of policies) fields += ALGORITHMS[policy.algorithm].fields;
  const read: unknown[] = [answers[0]];
  let at = 1;
  for (let c = 0; c < count; c++) {
    const status = answers[at];
    if (typeof status === 'string' && status.includes(':')) {
      read.push(1);
      for (const field of status.split(':')) read.push(Number(field));
      at++;
      continue;
    }
    const code = Number(status);
    const length = code === EXPIRED ? 1 : code === REFUSED ? 2 : fields + 1;
    for (let k = 0; k < length; k++) read.push(answers[at + k]);
    at += length;
  }
  return { answers: read, unread: at < answers.length ? String(answers[at]) : undefined };
}

/** Whether two checks differ in nothing but their key, so the script may read them as one shape. */
function sameShape(a: ScriptCheck, b: ScriptCheck): boolean {
  return (
    a.policies === b.policies &&
    a.ban === b.ban &&
    a.overrides === b.overrides &&
    a.nowArg === b.nowArg &&
    a.timeoutMs === b.timeoutMs &&
    a.cost === b.cost &&
    a.mode === b.mode &&
    a.sinceArg === b.sinceArg
  );
}

/** Where the first check's answer begins in a reply to a call of `shapes` shapes: after each shape's now. */
export function firstAnswerAt(shapes: number): number {
  return shapes;
}

/** The time (ms, by the clock the script used) that checks of `shape` (1-based) were decided at. */
export function nowOfShape(answers: readonly unknown[], shape: number): number {
  return Number(answers[shape - 1]);
}

/** A check's status, the first field of its answer at `answers[at]`: 1, 0, `EXPIRED` or `REFUSED`. */
export function answerStatus(answers: readonly unknown[], at: number): number {
  return Number(answers[at]);
}

/** Why Redis refused a check whose status is `REFUSED`. */
export function refusalOf(answers: readonly unknown[], at: number): string {
  return String(answers[at + 1]);
}

/** How many fields the answer of `check` at `answers[at]` has, its status included. */
export function answerLength(
  answers: readonly unknown[],
  at: number,
  { policies, ban, overrides }: ScriptCheck,
): number {
  const status = answerStatus(answers, at);
  if (status === EXPIRED) return 1;
  if (status === REFUSED) return 2;
  // applied, when the ban ends, until when the backoff holds the client back, the override
  let fields =
    1 +
    (ban !== undefined && ban.after > 0 ? 1 : 0) +
    (ban?.exponentialBackoff ? 1 : 0) +
    (overrides ? 1 : 0);
  for (const policy of policies) fields += ALGORITHMS[policy.algorithm].fields;
  return fields;
}

/** A decided check's answer at `answers[at]` (status 1 or 0) as the store answers it. */
export function bucketResultOf(
  { policies, ban, overrides }: ScriptCheck,
  answers: readonly unknown[],
  at: number,
  nowMs: number,
): BucketResult {
  // Each policy's fields, in policy order, then the ban's end, then the backoff's.
  let field = at + 1;
  const states = policies.map((policy) => {
    const { fields } = ALGORITHMS[policy.algorithm];
    const state = new Array<number>(fields);
    for (let k = 0; k < fields; k++) state[k] = Number(answers[field + k]);
    field += fields;
    return state;
  });
  const applied = answerStatus(answers, at) === 1;
  const bannedUntilMs = ban !== undefined && ban.after > 0 ? Number(answers[field++]) : 0;
  const backoffUntilMs = ban?.exponentialBackoff ? Number(answers[field++]) : undefined;
  const override = overrides ? storedOverrideOf(policies, answers[field]) : undefined;
  if (override === undefined) {
    if (backoffUntilMs === undefined) return { applied, nowMs, states, bannedUntilMs };
    return { applied, nowMs, states, bannedUntilMs, backoffUntilMs };
  }
  const { policies: overridden } = override;
  if (backoffUntilMs === undefined) return { applied, nowMs, states, bannedUntilMs, policies: overridden };
  return { applied, nowMs, states, bannedUntilMs, backoffUntilMs, policies: overridden };
}

/** An override's limits as the override script stores them after its end: 'limit:burst:…'. */
export function overrideLimitsArg(override: readonly ResolvedPolicy[]): string {
  return override.map(({ limit, capacity }) => `${limit}:${capacity}`).join(':');
}

/** Overrides decoded, by the policies they are for and the stored string: few keys have one. */
const decodedOverrides = new WeakMap<readonly ResolvedPolicy[], Map<string, OverrideResult | null>>();
const MAX_DECODED = 1000;

/**
 * A stored override (`'expires:limit:burst:…'`) for `policies`; `undefined` for none (`0`, `''`) or
 * one that does not fit them (it is then not in force: the script decides by the policies, too).
 */
export function storedOverrideOf(
  policies: readonly ResolvedPolicy[],
  stored: unknown,
): OverrideResult | undefined {
  if (typeof stored !== 'string' || stored === '') return undefined;
  let decoded = decodedOverrides.get(policies);
  if (decoded === undefined) {
    decoded = new Map();
    decodedOverrides.set(policies, decoded);
  }
  let result = decoded.get(stored);
  if (result === undefined) {
    result = decodeOverride(policies, stored);
    if (decoded.size >= MAX_DECODED) decoded.clear();
    decoded.set(stored, result);
  }
  return result ?? undefined;
}

function decodeOverride(policies: readonly ResolvedPolicy[], stored: string): OverrideResult | null {
  const numbers = stored.split(':').map(Number);
  if (numbers.length !== 1 + 2 * policies.length || !numbers.every(Number.isSafeInteger)) return null;
  const [expiresAtMs = 0] = numbers;
  try {
    const overridden = policies.map((policy, i) =>
      withLimits(policy, numbers[1 + 2 * i], numbers[2 + 2 * i], 'stored override'),
    );
    return { policies: Object.freeze(overridden), expiresAtMs: expiresAtMs === 0 ? undefined : expiresAtMs };
  } catch {
    return null; // limits no policy can have: the script does not decide by them either
  }
}

/**
 * The override script's ARGV: mode, now, the limits (`set`), the override's ttl in ms (`''`: none), how
 * long the key's buckets must be kept at least after a change, how long an ended override is kept after
 * its end (both in ms), then the limiter's own policies as the settle script reads a set.
 */
export function overrideArgs(
  mode: 'set' | 'remove' | 'get',
  nowArg: string,
  limits: string,
  ttlMs: number | undefined,
  keepMs: number,
  policies: readonly ResolvedPolicy[],
): string[] {
  const forgetMs = refillBoundMs(policies);
  const ttl = ttlMs === undefined ? '' : String(ttlMs);
  return [
    mode,
    nowArg,
    limits,
    ttl,
    String(keepMs),
    String(forgetMs),
    ...policySetArgs(policies, undefined, false),
  ];
}

/** The override script's reply: the time it ran at, and the stored override (`''`: none). */
export function overrideReplyOf(reply: unknown): [nowMs: number, stored: string] {
  const [nowMs, stored] = reply as unknown[];
  return [Number(nowMs), typeof stored === 'string' ? stored : String(stored ?? '')];
}

/** The lease script's ARGV: now, deadline, mode, lease id, the most leases, a lease's life in ms. */
export function leaseArgs(
  nowArg: string,
  deadlineArg: string,
  mode: 'acquire' | 'release',
  leaseId: string,
  limit: number,
  ttlMs: number,
): string[] {
  return [nowArg, deadlineArg, mode, leaseId, String(limit), String(ttlMs)];
}

/** The lease script's reply: its status (1, 0 or `EXPIRED`), the time it was decided at, leases held after. */
export function leaseReplyOf(reply: unknown): [status: number, nowMs: number, held: number] {
  const [status, nowMs, held] = reply as unknown[];
  return [Number(status), Number(nowMs), Number(held)];
}
