/**
 * Generates the batch scripts, two per algorithm and two per pair of algorithms: the single-check
 * script's work for each check of a batch whose checks differ in nothing but their key (one or two
 * policies, no ban, penalty or override, the same cost and deadline), as a process under load sends
 * them. They take the single-check script's ARGV once for all, and answer as the settle script does with
 * one shape, so the store reads their answers as the settle script's.
 *
 * - `check-<algorithm>-batch.lua`, `check-<first>-and-<second>-batch.lua`: each check on a key of its
 *   own. KEYS: the checks' keys.
 * - `check-<algorithm>-hot.lua`, `check-<first>-and-<second>-hot.lua`: every check on one key, read
 *   once and written once. KEYS: the key; ARGV begins with how many checks there are.
 *
 * ARGV     as the single-check script of the algorithm or the pair (`single-check.ts`, `policy-pair.ts`):
 *          the policies, then the cost (in units, for one policy of an algorithm that reads it so), the
 *          deadline, and now unless it is the server's
 * Returns  { now, then per check: 1 or 0 and its fields, or -2 and Redis's error }; past the deadline,
 *          -1 per check. In the script for distinct keys, a check applied and written in whole numbers
 *          is answered by the text written ('f1:f2…': applied, then the fields), which Redis replies for
 *          less than the numbers, and Redis's refusal of the MGET that reads the keys comes last
 *          (`batchCheckAnswers` in `wire.ts` reads it)
 */
import type { Algorithm, AlgorithmLua } from '../../../algorithms/algorithm.js';
import { ALGORITHM_LUA } from '../../../algorithms/registry.js';
import { fieldList, fieldsRead, inFieldLocals } from './fast-paths.js';
import { applied, matchedFields, type PairMember, pairMembers, policyPairFile } from './policy-pair.js';
import {
  COST_IN_UNITS,
  indented,
  keptExpiry,
  onePolicyArguments,
  SAFE,
  SAFE_OR_NOW,
  singleCheckParts,
  stateWrite,
  withLibrary,
} from './single-check.js';

/** The policy's arguments as the header names them. */
const ARGUMENT_NAMES: Readonly<Record<string, string>> = { window: 'windowMs', capacity: 'capacityUnits' };

/** The Lua a batch script is made of, for what it checks (one policy, or a pair). */
interface BatchParts {
  /** What is checked, as the header says it: `token-bucket`, or `token-bucket, then fixed-window`. */
  readonly what: string;
  /** `one policy` or `two policies`. */
  readonly policies: string;
  /** The fields' locals, in the stored order. */
  readonly fields: readonly string[];
  /** Lua that reads the fields from `raw`, a state that is there. */
  readonly readState: string;
  /** Lua that brings the state to now. */
  readonly current: string;
  /** A Lua condition: whether the cost fits. */
  readonly fits: string;
  /** Lua that applies the cost and sets `quiet`, declared local (`declare`) or not. */
  readonly charge: (declare: boolean) => string;
  /** Lua that sets `kept` for `stateWrite` (see `keptExpiry`), or '' where the state never keeps it. */
  readonly keptExpiry: string;
  readonly argumentNames: string;
  /** The policies' ARGV, then the cost's local name. */
  readonly policyArgs: readonly string[];
  readonly cost: 'cost' | 'units';
  /** The field that holds now once the state is brought to it (the algorithm's `nowField`), if any. */
  readonly nowField?: string;
}

/** The parts of the batch scripts of one policy of `algorithm`. */
function onePolicyParts(algorithm: Algorithm): BatchParts {
  const lua = ALGORITHM_LUA.get(algorithm) as AlgorithmLua;
  const { fields } = algorithm;
  const { units, names } = onePolicyArguments(algorithm, false);
  const inline = (body: string, spaces: number) =>
    indented(inFieldLocals(units ? body.replaceAll(COST_IN_UNITS, 'units') : body, fields), spaces);
  const parse = fieldsRead(Array.from({ length: fields }, (_, k) => `f${k + 1}`));
  return {
    what: algorithm.name,
    policies: 'one policy',
    fields: Array.from({ length: fields }, (_, k) => `f${k + 1}`),
    readState: `local from, sep = 1\nrepeat\n${parse}\nuntil true`,
    current: `do\n${inline(lua.current, 0)}\nend`,
    fits: inline(lua.fits, 0),
    charge: (declare) =>
      declare
        ? `${inline(lua.apply, 0)}\nlocal quiet, written = ${inline(lua.idle, 0)}, nil`
        : `${inline(lua.apply, 0)}\nquiet = ${inline(lua.idle, 0)}`,
    keptExpiry: keptExpiry([{ lua, inline: (body) => inline(body, 0) }]),
    argumentNames: `${names.map((name) => ARGUMENT_NAMES[name] ?? name).join(', ')}, then ${units ? 'cost * windowMs' : 'cost'}`,
    policyArgs: names,
    cost: units ? 'units' : 'cost',
    ...(lua.nowField === undefined ? {} : { nowField: `f${lua.nowField}` }),
  };
}

/** The parts of the batch scripts of two policies, of `first`'s algorithm then `second`'s. */
function pairParts(first: Algorithm, second: Algorithm): BatchParts {
  const pair: readonly PairMember[] = pairMembers(first, second);
  const fields = pair.flatMap((policy) => policy.fields);
  return {
    what: `${first.name}, then ${second.name}`,
    policies: 'two policies',
    fields,
    readState: matchedFields(fields),
    current: pair.map(({ step, lua }) => `do\n${step(lua.current, 0)}\nend`).join('\n'),
    fits: pair.map(({ step, lua }) => `(${step(lua.fits, 0)})`).join('\nand '),
    charge: (declare) =>
      `${declare ? 'local quiet, written = 0, nil' : 'quiet = 0'}\n${pair
        .map(({ step, lua }) => applied(step(lua.apply, 0), step(lua.idle, 0)))
        .join('')
        .trimEnd()}`,
    keptExpiry: keptExpiry(pair.map(({ lua, step }) => ({ lua, inline: (body) => step(body, 0) }))),
    argumentNames: `${pair.map(({ algorithm, names }) => `${names.join(', ')} (${algorithm.name})`).join(', then ')}; then cost`,
    policyArgs: pair.flatMap((policy) => policy.names),
    cost: 'cost',
  };
}

/** The Lua both batch scripts of `parts` share: the state written, the answer, the arguments. */
function sharedOf({ fields, policyArgs, cost, nowField }: BatchParts) {
  const locals = fields.join(', ');
  const whole = fields.map((f) => `(${SAFE_OR_NOW(f, f === nowField)})`).join('\nand ');
  const anyNumber = fields
    .map((f) => `(${SAFE(f)} and format('%d', ${f}) or format('%.17g', ${f}))`)
    .join(" .. ':' .. ");
  const digits = `format('${fields.map(() => '%d').join(':')}', ${locals})`;
  const value = `(${whole})\nand ${digits}\nor ${anyNumber}`;
  // The check's answer at answers[n + 1]: applied, then its fields.
  const answered = fields.map((_, k) => `answers[n + ${k + 2}]`).join(', ');
  const numbers = fields.map((f) => `${SAFE(f)} and ${f} or format('%.17g', ${f})`).join(', ');
  const answer = `-- A Lua number in a reply is cut to an integer: any other is answered with all its digits.
if ${whole} then
  answers[n + 1], ${answered} = applied, ${locals}
else
  answers[n + 1], ${answered} = applied, ${numbers}
end
n = n + ${fields.length + 1}`;
  const prelude = (first: number, count: string) => batchPrelude(policyArgs, cost, first, count);
  return { locals, whole, digits, anyNumber, value, answer, prelude };
}

/**
 * What every batch script does first: the policy's numbers (`policyArgs`, as locals), the cost (`cost`),
 * the deadline and now, from ARGV[`first`] on; `answers` begins with now, and a batch past its deadline
 * answers -1 for each of its `count` checks.
 */
export function batchPrelude(
  policyArgs: readonly string[],
  cost: string,
  first: number,
  count: string,
): string {
  const at = first + policyArgs.length;
  return `local ${policyArgs.join(', ')} = ${policyArgs.map((_, k) => `argv[${first + k}] + 0`).join(', ')}
local ${cost}, deadline, now = argv[${at}] + 0, argv[${at + 1}], argv[${at + 2}]
if now then
  now = now + 0
else
  local time = redis.call('TIME')
  local us = time[2] + 0
  now = time[1] * 1000 + (us - us % 1000) / 1000
end
local answers, n = { now }, 1
if deadline ~= '' and now > deadline + 0 then
  for c = 1, ${count} do answers[c + 1] = -1 end
  return answers
end`;
}

/** The batch script for checks each on a key of its own, as Redis runs it. */
function batchLua(parts: BatchParts): string {
  const { what, policies, fields, readState, current, fits, charge, keptExpiry, argumentNames } = parts;
  const { locals, whole, digits, anyNumber, answer, prelude } = sharedOf(parts);
  const keepable = keptExpiry !== '';
  const nowLast = nowTextOf(parts, digits);
  const header = `-- A batch of single checks (${what}): a consume of ${policies} on each key, each key once, all alike but the key.
-- KEYS     the checks' keys
-- ARGV     ${argumentNames}, deadline ('' none), now ('' or absent: the server's)
-- Path: past the deadline, -1 for every check; else read every key's state (one MGET), and per key, as
-- the single-check script: bring the state to now, and if the cost fits, apply it and write (or delete)
-- the state.
-- Answers { now, then per check: applied (1 or 0) and the fields, or -2 and Redis's error }; a check
-- applied and written in whole numbers is answered by the text written instead ('f1:f2…'); last, when
-- Redis refused the MGET, its error.`;
  return withLibrary(
    header,
    `
local argv, keys = ARGV, KEYS
${prelude(1, '#keys')}
${nowLast?.declared ?? ''}${KEYS_READ_AT_ONCE}
for c = 1, #keys do
  local key = keys[c]
  -- err: why Redis refused to read or write the key, answered in place of the check's answer.
  ${indented(KEY_READ, 2)}
  if not err then
    local stored, ${locals} = raw and true or false, ${fieldList(fields.length, () => 'false')}
    if raw then
      ${readState}
    end
    ${keptExpiry}${current}
    -- answered: whether the check is answered by the text written (Redis replies a string for a fraction
    -- of what it costs to reply the numbers).
    local applied, answered = 0, false
    if ${fits} then
      applied = 1
      ${charge(true)}
      if quiet > 0 then
        if ${whole} then
          local value = ${nowLast?.value ?? digits}
          ${batchWrite(keepable)}
          err = written.err
          if not err then answers[n + 1], n, answered = value, n + 1, true end
        else
          local value = ${anyNumber}
          ${batchWrite(keepable)}
          err = written.err
        end
      elseif raw then
        written = redis.pcall('DEL', key)
        if type(written) == 'table' then err = written.err end
      end
    end
    if not (err or answered) then
      ${answer}
    end
  end
  if err then
    answers[n + 1], answers[n + 2] = -2, err
    n = n + 2
  end
end
${UNREAD_ANSWERED}
return answers
`,
  );
}

/**
 * For a state whose last field holds now once brought to it (and that has others before it), what lets
 * every check of a batch for distinct keys write that field as text formatted once for all: `declared`,
 * Lua that formats it (after the prelude), and `value`, the state as text in whole numbers (`digits`
 * where the field does not hold now).
 */
function nowTextOf(
  { fields, nowField }: BatchParts,
  digits: string,
): { declared: string; value: string } | undefined {
  const last = fields.at(-1);
  if (nowField === undefined || nowField !== last || fields.length < 2) return undefined;
  const others = fields.slice(0, -1);
  return {
    declared: `-- nowText: the last field as text where it holds now, formatted once for every check.
local nowText = format(':%d', now)
`,
    value: `${last} == now and format('${others.map(() => '%d').join(':')}', ${others.join(', ')}) .. nowText
  or ${digits}`,
  };
}

/**
 * Lua that reads every key of a batch for distinct keys (`keys`) with one MGET, into `raws`. `unread`:
 * why Redis refused it (an ACL user without MGET), answered after the checks by {@link UNREAD_ANSWERED};
 * each key is then read alone by {@link KEY_READ}, and a key refused fails alone.
 */
export const KEYS_READ_AT_ONCE = `-- raws: every key's state, read by one MGET. unread: why Redis refused it, answered after the checks;
-- each key is then read alone.
local raws = redis.pcall('MGET', unpack(keys))
local unread = raws.err
if unread then raws = false end`;

/**
 * Lua that sets `raw`, the state of `key`, the `c`th of {@link KEYS_READ_AT_ONCE}'s keys, and `err`, why
 * Redis refused to read it: only a key read alone can be refused, as MGET reads a key of another type as
 * missing (a refusal is a table; a string's err is nil).
 */
export const KEY_READ = `local raw, err
if raws then
  raw = raws[c]
else
  raw = redis.pcall('GET', key)
  err = raw and raw.err
end`;

/** Lua that answers, after every check, why Redis refused the MGET of {@link KEYS_READ_AT_ONCE}. */
export const UNREAD_ANSWERED = 'if unread then answers[n + 1] = unread end';

/**
 * Lua that writes `value` (a local) as the new state of `key`, read by {@link KEY_READ}, with `store`
 * (Lua that writes `value` over a state that was read). MGET reads a key of another type as it reads a
 * missing one: a state not read is written only if the key is missing (NX), and a key NX left is
 * answered by its GET, Redis's refusal.
 */
export function newOrStoredWrite(store: string): string {
  return `if raw then
  ${indented(store, 2)}
else
  written = redis.pcall('SET', key, value, 'PX', format('%d', quiet), 'NX') or redis.pcall('GET', key)
end`;
}

/** {@link newOrStoredWrite} of a batch script's state, kept to expire as it was if `keepable`. */
function batchWrite(keepable: boolean): string {
  return newOrStoredWrite(stateWrite('value', keepable));
}

/**
 * Lua that ends a batch script for one key: when a check changed the state (`dirty`), writes it once
 * (`value`: Lua that sets the local `value` to the state as text) or deletes it; a write Redis refuses
 * answers every check with the refusal.
 */
export function hotKeyWrite(value: string): string {
  return `if dirty then
  local written
  if stored then
    local value
    ${indented(value, 4)}
    written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))
  elseif raw then
    written = redis.pcall('DEL', key)
  end
  if type(written) == 'table' and written.err then
    -- Nothing was written: every check answers Redis's refusal.
    answers = { now }
    for c = 1, count do answers[2 * c], answers[2 * c + 1] = -2, written.err end
  end
end
return answers`;
}

/** The batch script for checks all on one key, as Redis runs it. */
function hotKeyLua(parts: BatchParts): string {
  const { what, policies, fields, readState, current, fits, charge, argumentNames } = parts;
  const { locals, value, answer, prelude } = sharedOf(parts);
  const header = `-- A batch of single checks (${what}) on one key: consumes of ${policies}, all alike.
-- KEYS[1]  the key
-- ARGV     how many checks, then ${argumentNames}, deadline ('' none), now ('' or absent: the server's)
-- Path: past the deadline, -1 for every check; else read the state once, and per check, as the
-- single-check script: bring it to now, and if the cost fits, apply it; then write (or delete) it once.
-- Answers { now, then per check: applied (1 or 0) and the fields, or -2 and Redis's error }.`;
  return withLibrary(
    header,
    `
local argv, key = ARGV, KEYS[1]
local count = argv[1] + 0
${prelude(2, 'count')}
local raw = redis.pcall('GET', key)
if raw and raw.err then -- a refusal (a string's err is nil)
  for c = 1, count do answers[2 * c], answers[2 * c + 1] = -2, raw.err end
  return answers
end
local stored, ${locals} = raw and true or false, ${fieldList(fields.length, () => 'false')}
if raw then
  ${readState}
end
-- quiet: the expiry of the state as the last check applied left it (none: deleted); dirty: whether one
-- applied.
local quiet, dirty = 0, false
for _ = 1, count do
  ${current}
  local applied = 0
  if ${fits} then
    applied = 1
    ${charge(false)}
    stored, dirty = quiet > 0, true
  end
  ${answer}
end
${hotKeyWrite(`value = ${value}`)}
`,
  );
}

/**
 * The batch script of `algorithm` for a limiter that reads overrides, for checks each on a key of its own
 * (`check-<algorithm>-overridable-batch.lua`): the overridable single-check script's decision for each key,
 * answered as the settle script answers a set that reads overrides (the override last, 0: none).
 */
export function overridableBatchCheckLua(algorithm: Algorithm): string {
  const { policyNames, cost, body } = singleCheckParts(algorithm, true);
  const header = `-- A batch of single checks (${algorithm.name}, reading overrides): a consume of one policy on each key, each key once, all alike but the key.
-- KEYS     the checks' keys; each key's override beside it, at <key>..':o'
-- ARGV     ${policyNames.map((name) => ARGUMENT_NAMES[name] ?? name).join(', ')}, then ${cost}, deadline ('' none), now ('' or absent: the server's)
-- Path: past the deadline, -1 for every check; else per key, as the single-check script: read the state
-- and the override in force or ended, bring the state to now, and if the cost fits, apply it and write
-- (or delete) the state.
-- Answers { now, then per check: applied (1 or 0), the fields and the override, or -2 and Redis's error }.`;
  return withLibrary(
    header,
    `
local argv, keys = ARGV, KEYS
${batchPrelude(policyNames, cost, 1, '#keys')}
-- One key's check, answered as the single-check script answers it ({ now, then the answer }). Its limits
-- are copies of the policy's, which an override in force changes for this key alone.
local function check(key)
  local ${policyNames.join(', ')} = ${policyNames.join(', ')}
  local raw = redis.pcall('GET', key)
  if raw and raw.err then return { now, -2, raw.err } end -- a refusal (a string's err is nil)
  ${body.trimEnd()}
end
for c = 1, #keys do
  local answer = check(keys[c])
  for k = 2, #answer do answers[n + k - 1] = answer[k] end
  n = n + #answer - 1
end
return answers
`,
  );
}

/** The batch script of `algorithm` for checks each on a key of its own, as Redis runs it. */
export function batchCheckLua(algorithm: Algorithm): string {
  return batchLua(onePolicyParts(algorithm));
}

/** The batch script of `algorithm` for checks all on one key, as Redis runs it. */
export function hotKeyCheckLua(algorithm: Algorithm): string {
  return hotKeyLua(onePolicyParts(algorithm));
}

/** The batch script of two policies (`first`'s algorithm, then `second`'s) for checks each on a key of its own. */
export function pairBatchCheckLua(first: Algorithm, second: Algorithm): string {
  return batchLua(pairParts(first, second));
}

/** The batch script of two policies (`first`'s algorithm, then `second`'s) for checks all on one key. */
export function pairHotKeyCheckLua(first: Algorithm, second: Algorithm): string {
  return hotKeyLua(pairParts(first, second));
}

/** The files of a pair's batch scripts, in `lua/`: for distinct keys, and for one key. */
export function pairBatchFiles(first: Algorithm, second: Algorithm): { batch: string; hot: string } {
  const stem = policyPairFile(first, second).replace(/\.lua$/, '');
  return { batch: `${stem}-batch.lua`, hot: `${stem}-hot.lua` };
}
