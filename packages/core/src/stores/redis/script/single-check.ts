/**
 * Generates the single-check scripts, one per algorithm: what the settle script does for the commonest
 * call of all, a consume of one policy with no ban, penalty or override, alone in its call (a fleet of
 * modestly loaded processes sends mostly these). Each answers exactly as the settle script would, in its
 * layout, from a body with no set or shape to parse, no batch to hold and no function defined: Redis
 * runs a script's whole body on every call, and pays for every argument it is sent, so what a call does
 * not use is not in it.
 *
 * KEYS[1]  the check's key, as for the settle script
 * ARGV     the policy's limit and windowMs (and, for an algorithm that reads it, its capacityUnits), then
 *          the check's cost and deadline, and its now when the store has a clock of its own (absent: the
 *          server's), each as the settle script's shape has it (`wire.ts`)
 * Returns  { now, then the check's answer as the settle script gives it }
 */
import type { Algorithm, AlgorithmLua } from '../../../algorithms/algorithm.js';
import { ALGORITHM_LUA } from '../../../algorithms/registry.js';
import { fieldList, inFieldLocals } from './fast-paths.js';

/** Whether an algorithm's single-check script is sent the policy's capacity. */
export function readsCapacity(algorithm: Algorithm): boolean {
  const lua = ALGORITHM_LUA.get(algorithm) as AlgorithmLua;
  return [lua.current, lua.fits, lua.apply, lua.idle].some((body) => /\bcapacity\b/.test(body));
}

/** A whole number a double holds exactly: written and answered in plain digits. */
const SAFE = (x: string) => `${x} % 1 == 0 and ${x} > -9007199254740992 and ${x} < 9007199254740992`;

/** The single-check script of `algorithm`, as Redis runs it. */
export function singleCheckLua(algorithm: Algorithm): string {
  const lua = ALGORITHM_LUA.get(algorithm) as AlgorithmLua;
  const { fields } = algorithm;
  const inline = (body: string) => inFieldLocals(body, fields).trim();
  const f = (k: number) => `f${k}`;
  const locals = fieldList(fields, f);
  const capacity = readsCapacity(algorithm);
  const policyArgs = capacity ? 'limit, window, capacity' : 'limit, window';
  const policyValues = fieldList(capacity ? 3 : 2, (k) => `tonumber(argv[${k}])`);
  const a = capacity ? 4 : 3; // where the check's arguments begin
  // p<k>: the k-th number of the stored string; false past its end, so a state cut short fails.
  let parse = '';
  for (let k = fields; k >= 1; k--) {
    const part = `sep = find(raw, ':', from, true)\n    f${k} = tonumber(sub(raw, from, sep and sep - 1))`;
    parse = k === fields ? part : `${part}\n    if not sep then break end\n    from = sep + 1\n    ${parse}`;
  }
  const whole = fieldList(fields, (k) => `(${SAFE(f(k))})`, ' and ');
  const digits = fieldList(fields, () => '%d', ':');
  const anyNumber = fieldList(
    fields,
    (k) => `(${SAFE(f(k))} and format('%d', ${f(k)}) or format('%.17g', ${f(k)}))`,
    " .. ':' .. ",
  );
  return `
local tonumber, min, max, floor, ceil = tonumber, math.min, math.max, math.floor, math.ceil
local find, sub, format = string.find, string.sub, string.format
local argv, key = ARGV, KEYS[1]
local ${policyArgs} = ${policyValues}
local cost, deadline, now = tonumber(argv[${a}]), argv[${a + 1}], argv[${a + 2}]
if now then
  now = tonumber(now)
else
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + floor(tonumber(time[2]) / 1000)
end
if deadline ~= '' and now > tonumber(deadline) then return { now, -1 } end

local raw = redis.pcall('GET', key)
if type(raw) == 'table' then return { now, -2, raw.err } end
local stored, ${locals} = raw and true or false, ${fieldList(fields, () => 'false')}
if raw then
  local from, sep = 1, nil
  repeat
    ${parse}
  until true
end
do
  ${inline(lua.current)}
end
local applied = 0
if ${inline(lua.fits)} then
  applied = 1
  ${inline(lua.apply)}
  local quiet, written = max(0, ${inline(lua.idle)}), nil
  if quiet > 0 then
    local value
    if ${whole} then value = format('${digits}', ${locals}) else value = ${anyNumber} end
    written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))
  elseif raw then
    written = redis.pcall('DEL', key)
  end
  if type(written) == 'table' and written.err then return { now, -2, written.err } end
end
-- A Lua number in a reply is cut to an integer: any other is answered with all its digits.
if ${whole} then return { now, applied, ${locals} } end
return { now, applied, ${fieldList(fields, (k) => `${SAFE(f(k))} and ${f(k)} or format('%.17g', ${f(k)})`)} }
`;
}
