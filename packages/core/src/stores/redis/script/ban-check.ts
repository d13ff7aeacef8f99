/**
 * Generates the single-check scripts of one policy with a ban, one per algorithm
 * (`lua/check-<algorithm>-ban.lua`): what the settle script does for a consume of one policy whose
 * limiter bans (`ban: { after, duration }`, with no penalty and no override), alone in its call, with
 * the policy's steps and the ban's inlined and every field in a local. A login route's limiter is the
 * common case: it bans, and each of its checks comes alone.
 *
 * KEYS[1]  the check's key: the policy's fields, then the ban's two (refusals in a row, when the ban ends)
 * ARGV     as the policy's single-check script (`single-check.ts`): the policy's numbers, then the ban's
 *          refusals in a row and ms, then the cost (in units for an algorithm that reads it so), the
 *          deadline, and now unless it is the server's
 * Returns  as the settle script: { now, applied, the policy's fields, when the ban ends (0: none) }
 */
import type { Algorithm, AlgorithmLua } from '../../../algorithms/algorithm.js';
import { ALGORITHM_LUA } from '../../../algorithms/registry.js';
import { fieldList, fieldsRead, inFieldLocals } from './fast-paths.js';
import {
  COST_IN_UNITS,
  indented,
  onePolicyArguments,
  prelude,
  readsCapacity,
  SAFE,
  withLibrary,
} from './single-check.js';

/** The single-check script of one policy of `algorithm` with a ban, as Redis runs it. */
export function banCheckLua(algorithm: Algorithm): string {
  const lua = ALGORITHM_LUA.get(algorithm) as AlgorithmLua;
  const { fields } = algorithm;
  const { units, names } = onePolicyArguments(algorithm, false);
  const inline = (body: string) =>
    indented(inFieldLocals(units ? body.replaceAll(COST_IN_UNITS, 'units') : body, fields), 2);
  const policy = Array.from({ length: fields }, (_, k) => `f${k + 1}`);
  const all = [...policy, 'refusals', 'bannedUntil'];
  const numbers = [...names, 'after', 'duration'];
  const parse = fieldsRead(all);
  const reply = (x: string) => `${SAFE(x)} and ${x} or format('%.17g', ${x})`;
  const header = `-- A single check (${algorithm.name}) with a ban: one consume of one policy, alone in its call.
-- KEYS[1]  the check's key: ${policy.join(':')} (the policy), then refusals in a row and when the ban ends
-- ARGV     limit${units ? '' : ', windowMs'}${readsCapacity(algorithm) ? ', capacityUnits' : ''}, after, durationMs (the ban), then ${units ? 'cost * windowMs' : 'cost'}, deadline ('' none), now ('' or absent: the server's)
-- Path: read the state (-2: Redis refused the key), bring it to now; banned, refuse and change nothing;
-- else if the cost fits, apply it and start the refusals again, if not count one more (a ban at after),
-- and write (or delete) the state. Answers { now, applied, the policy's fields, when the ban ends (0: none) }.`;
  return withLibrary(
    header,
    `
${prelude(`local ${numbers.join(', ')} = ${numbers.map((_, k) => `argv[${k + 1}] + 0`).join(', ')}`, (k) => String(numbers.length + 1 + k), false, units ? 'units' : 'cost')}local stored, ${all.join(', ')} = raw and true or false, ${fieldList(all.length, () => 'false')}
if raw then
  local from, sep = 1
  repeat
    ${parse}
  until true
end
do
  ${inline(lua.current)}
end
-- A ban that has run out is over, and its count starts again.
if not stored or (bannedUntil > 0 and bannedUntil <= now) then refusals, bannedUntil = 0, 0 end
if bannedUntil > now then
  return { now, 0, ${policy.map(reply).join(', ')}, ${reply('bannedUntil')} }
end
local applied = 0
if ${inline(lua.fits)} then
  applied = 1
  ${inline(lua.apply)}
  refusals, bannedUntil = 0, 0
elseif refusals + 1 >= after then
  refusals, bannedUntil = 0, now + duration
else
  refusals = refusals + 1
end
-- Kept until the policy's state and the ban's say no more than fresh ones; deleted when they already do.
local quiet, written = ${inline(lua.idle)}, nil
if bannedUntil - now > quiet then quiet = bannedUntil - now end
if quiet > 0 then
  local value
  if ${all.map((x) => `(${SAFE(x)})`).join('\nand ')} then
    value = format('${all.map(() => '%d').join(':')}', ${all.join(', ')})
  else
    value = ${all.map((x) => `(${SAFE(x)} and format('%d', ${x}) or format('%.17g', ${x}))`).join("\n.. ':' .. ")}
  end
  written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))
  if written.err then return { now, -2, written.err } end
elseif raw then
  -- A number, or a refusal (a table).
  written = redis.pcall('DEL', key)
  if type(written) == 'table' then return { now, -2, written.err } end
end
-- A Lua number in a reply is cut to an integer: any other is answered with all its digits.
return { now, applied, ${policy.map(reply).join(', ')}, ${reply('bannedUntil')} }
`,
  );
}
