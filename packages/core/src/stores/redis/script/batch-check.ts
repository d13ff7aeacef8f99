/**
 * Generates the batch scripts, two per algorithm: the single-check script's work for each check of a
 * batch whose checks differ in nothing but their key (one policy, no ban, penalty or override, the same
 * cost and deadline), as a process under load sends them. They take the single-check script's ARGV
 * once for all, and answer as the settle script does with one shape, so the store reads their answers
 * as the settle script's.
 *
 * - `check-<algorithm>-batch.lua`: each check on a key of its own. KEYS: the checks' keys.
 * - `check-<algorithm>-hot.lua`: every check on one key, read once and written once. KEYS: the key;
 *   ARGV begins with how many checks there are.
 *
 * ARGV     as the single-check script of the algorithm (`single-check.ts`): the policy, then the cost
 *          (in units, for an algorithm that reads it so), the deadline, and now unless it is the server's
 * Returns  { now, then per check: 1 or 0 and its fields, or -2 and Redis's error }; past the deadline,
 *          -1 per check
 */
import type { Algorithm, AlgorithmLua } from '../../../algorithms/algorithm.js';
import { ALGORITHM_LUA } from '../../../algorithms/registry.js';
import { fieldList, inFieldLocals } from './fast-paths.js';
import { COST_IN_UNITS, indented, onePolicyArguments, SAFE, withLibrary } from './single-check.js';

/** The policy's arguments as the header names them. */
const ARGUMENT_NAMES: Readonly<Record<string, string>> = { window: 'windowMs', capacity: 'capacityUnits' };

/** The Lua both batch scripts of `algorithm` are made of, indented for the loop over checks. */
function partsOf(algorithm: Algorithm) {
  const lua = ALGORITHM_LUA.get(algorithm) as AlgorithmLua;
  const { fields } = algorithm;
  const { units, names } = onePolicyArguments(algorithm, false);
  const inline = (body: string, spaces: number) =>
    indented(inFieldLocals(units ? body.replaceAll(COST_IN_UNITS, 'units') : body, fields), spaces);
  const f = (k: number) => `f${k}`;
  const locals = fieldList(fields, f);
  // f<k>: the k-th number of the stored string; false past its end, so a state cut short fails.
  const parse = (spaces: number) => {
    const pad = ' '.repeat(spaces);
    let lines = '';
    for (let k = fields; k >= 1; k--) {
      const part = `sep = find(raw, ':', from, true)\n${pad}f${k} = sub(raw, from, sep and sep - 1) + 0`;
      lines =
        k === fields
          ? part
          : `${part}\n${pad}if not sep then break end\n${pad}from = sep + 1\n${pad}${lines}`;
    }
    return lines;
  };
  const whole = (spaces: number) =>
    fieldList(fields, (k) => `(${SAFE(f(k))})`, `\n${' '.repeat(spaces)}and `);
  const value = (spaces: number) => {
    const pad = ' '.repeat(spaces);
    const anyNumber = fieldList(
      fields,
      (k) => `(${SAFE(f(k))} and format('%d', ${f(k)}) or format('%.17g', ${f(k)}))`,
      " .. ':' .. ",
    );
    return `(${whole(spaces)})\n${pad}and format('${fieldList(fields, () => '%d', ':')}', ${locals})\n${pad}or ${anyNumber}`;
  };
  // The check's answer at answers[n + 1]: applied, then its fields.
  const answer = (spaces: number) => {
    const pad = ' '.repeat(spaces);
    const answered = fieldList(fields, (k) => `answers[n + ${k + 1}]`);
    const digits = fieldList(fields, (k) => `${SAFE(f(k))} and ${f(k)} or format('%.17g', ${f(k)})`);
    return `-- A Lua number in a reply is cut to an integer: any other is answered with all its digits.
${pad}if ${whole(spaces + 2)} then
${pad}  answers[n + 1], ${answered} = applied, ${locals}
${pad}else
${pad}  answers[n + 1], ${answered} = applied, ${digits}
${pad}end
${pad}n = n + ${fields + 1}`;
  };
  const argumentNames = `${names.map((name) => ARGUMENT_NAMES[name] ?? name).join(', ')}, then ${units ? 'cost * windowMs' : 'cost'}, deadline ('' none), now ('' or absent: the server's)`;
  // The policy, the cost, the deadline and now, from ARGV[first] on; a batch past its deadline answers -1
  // for each of its `count` checks.
  const prelude = (
    first: number,
    count: string,
  ) => `local ${names.join(', ')} = ${fieldList(names.length, (k) => `argv[${first + k - 1}] + 0`)}
local ${units ? 'units' : 'cost'}, deadline, now = argv[${first + names.length}] + 0, argv[${first + names.length + 1}], argv[${first + names.length + 2}]
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
  return { lua, inline, locals, parse, value, answer, argumentNames, prelude };
}

/** The batch script of `algorithm` for checks each on a key of its own, as Redis runs it. */
export function batchCheckLua(algorithm: Algorithm): string {
  const { fields } = algorithm;
  const { lua, inline, locals, parse, value, answer, argumentNames, prelude } = partsOf(algorithm);
  const header = `-- A batch of single checks (${algorithm.name}): a consume of one policy on each key, each key once, all alike but the key.
-- KEYS     the checks' keys
-- ARGV     ${argumentNames}
-- Path: past the deadline, -1 for every check; else per key, as the single-check script: read the state,
-- bring it to now, and if the cost fits, apply it and write (or delete) the state.
-- Answers { now, then per check: applied (1 or 0) and the fields, or -2 and Redis's error }.`;
  return withLibrary(
    header,
    `
local argv, keys = ARGV, KEYS
${prelude(1, '#keys')}
for c = 1, #keys do
  local key = keys[c]
  -- err: why Redis refused to read or write the key, answered in place of the check's answer.
  local raw, err = redis.pcall('GET', key), nil
  if type(raw) == 'table' then
    err = raw.err
  else
    local stored, ${locals} = raw and true or false, ${fieldList(fields, () => 'false')}
    if raw then
      local from, sep = 1
      repeat
        ${parse(8)}
      until true
    end
    do
      ${inline(lua.current, 6)}
    end
    local applied = 0
    if ${inline(lua.fits, 4)} then
      applied = 1
      ${inline(lua.apply, 6)}
      local quiet, written = ${inline(lua.idle, 6)}, nil
      if quiet > 0 then
        written = redis.pcall('SET', key, ${value(8)}, 'PX', format('%d', quiet))
      elseif raw then
        written = redis.pcall('DEL', key)
      end
      if type(written) == 'table' then err = written.err end
    end
    if not err then
      ${answer(6)}
    end
  end
  if err then
    answers[n + 1], answers[n + 2] = -2, err
    n = n + 2
  end
end
return answers
`,
  );
}

/** The batch script of `algorithm` for checks all on one key, as Redis runs it. */
export function hotKeyCheckLua(algorithm: Algorithm): string {
  const { fields } = algorithm;
  const { lua, inline, locals, parse, value, answer, argumentNames, prelude } = partsOf(algorithm);
  const header = `-- A batch of single checks (${algorithm.name}) on one key: consumes of one policy, all alike.
-- KEYS[1]  the key
-- ARGV     how many checks, then ${argumentNames}
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
if type(raw) == 'table' then
  for c = 1, count do answers[2 * c], answers[2 * c + 1] = -2, raw.err end
  return answers
end
local stored, ${locals} = raw and true or false, ${fieldList(fields, () => 'false')}
if raw then
  local from, sep = 1
  repeat
    ${parse(4)}
  until true
end
-- quiet: the expiry of the state as the last check applied left it (none: deleted); dirty: whether one
-- applied.
local quiet, dirty = 0, false
for _ = 1, count do
  do
    ${inline(lua.current, 4)}
  end
  local applied = 0
  if ${inline(lua.fits, 2)} then
    applied = 1
    ${inline(lua.apply, 4)}
    quiet = ${inline(lua.idle, 4)}
    stored, dirty = quiet > 0, true
  end
  ${answer(2)}
end
if dirty then
  local written
  if stored then
    written = redis.pcall('SET', key, ${value(6)}, 'PX', format('%d', quiet))
  elseif raw then
    written = redis.pcall('DEL', key)
  end
  if type(written) == 'table' and written.err then
    -- Nothing was written: every check answers Redis's refusal.
    answers = { now }
    for c = 1, count do answers[2 * c], answers[2 * c + 1] = -2, written.err end
  end
end
return answers
`,
  );
}
