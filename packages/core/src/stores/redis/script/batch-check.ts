/**
 * Generates the batch scripts, one per algorithm: the single-check script's work for each key of a
 * batch whose checks differ in nothing but their key (one policy, no ban, penalty or override, the same
 * cost and deadline, each key once), as a process under load sends them. They take the single-check
 * script's ARGV once for all, a key per check and nothing else per check, and answer as the settle
 * script does with one shape, so the store reads their answers as the settle script's.
 *
 * KEYS     the checks' keys, each once
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

/** The batch script of `algorithm`, as Redis runs it. */
export function batchCheckLua(algorithm: Algorithm): string {
  const lua = ALGORITHM_LUA.get(algorithm) as AlgorithmLua;
  const { fields } = algorithm;
  const { units, names } = onePolicyArguments(algorithm, false);
  const inline = (body: string, spaces: number) =>
    indented(inFieldLocals(units ? body.replaceAll(COST_IN_UNITS, 'units') : body, fields), spaces);
  const f = (k: number) => `f${k}`;
  const locals = fieldList(fields, f);
  const a = names.length + 1; // where the check's arguments begin
  // f<k>: the k-th number of the stored string; false past its end, so a state cut short fails.
  let parse = '';
  for (let k = fields; k >= 1; k--) {
    const part = `sep = find(raw, ':', from, true)\n        f${k} = sub(raw, from, sep and sep - 1) + 0`;
    parse =
      k === fields
        ? part
        : `${part}\n        if not sep then break end\n        from = sep + 1\n        ${parse}`;
  }
  const whole = fieldList(fields, (k) => `(${SAFE(f(k))})`, '\n      and ');
  const value = `(${whole})\n        and format('${fieldList(fields, () => '%d', ':')}', ${locals})\n        or ${fieldList(
    fields,
    (k) => `(${SAFE(f(k))} and format('%d', ${f(k)}) or format('%.17g', ${f(k)}))`,
    " .. ':' .. ",
  )}`;
  const answered = fieldList(fields, (k) => `answers[n + ${k + 1}]`);
  const header = `-- A batch of single checks (${algorithm.name}): a consume of one policy on each key, each key once, all alike but the key.
-- KEYS     the checks' keys
-- ARGV     ${names.map((name) => ARGUMENT_NAMES[name] ?? name).join(', ')}, then ${units ? 'cost * windowMs' : 'cost'}, deadline ('' none), now ('' or absent: the server's)
-- Path: past the deadline, -1 for every check; else per key, as the single-check script: read the state,
-- bring it to now, and if the cost fits, apply it and write (or delete) the state.
-- Answers { now, then per check: applied (1 or 0) and the fields, or -2 and Redis's error }.`;
  return withLibrary(
    header,
    `
local argv, keys = ARGV, KEYS
local ${names.join(', ')} = ${fieldList(names.length, (k) => `argv[${k}] + 0`)}
local ${units ? 'units' : 'cost'}, deadline, now = argv[${a}] + 0, argv[${a + 1}], argv[${a + 2}]
if now then
  now = now + 0
else
  local time = redis.call('TIME')
  local us = time[2] + 0
  now = time[1] * 1000 + (us - us % 1000) / 1000
end
local answers, n = { now }, 1
if deadline ~= '' and now > deadline + 0 then
  for c = 1, #keys do answers[c + 1] = -1 end
  return answers
end
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
        ${parse}
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
        written = redis.pcall('SET', key, ${value}, 'PX', format('%d', quiet))
      elseif raw then
        written = redis.pcall('DEL', key)
      end
      if type(written) == 'table' then err = written.err end
    end
    if not err then
      -- A Lua number in a reply is cut to an integer: any other is answered with all its digits.
      if ${whole} then
        answers[n + 1], ${answered} = applied, ${locals}
      else
        answers[n + 1], ${answered} = applied, ${fieldList(fields, (k) => `${SAFE(f(k))} and ${f(k)} or format('%.17g', ${f(k)})`)}
      end
      n = n + ${fields + 1}
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
