/**
 * Generates the scripts of one policy with a ban, two per algorithm: what the settle script does for a
 * consume of one policy whose limiter bans (`ban: { after, duration }`, with no penalty and no override),
 * with the policy's steps and the ban's inlined and every field in a local. A login route's limiter is
 * the common case: it bans, and its checks come alone, or, under load, many at once on distinct keys.
 *
 * - `lua/check-<algorithm>-ban.lua`: a check alone in its call.
 * - `lua/check-<algorithm>-ban-batch.lua`: checks alike but for their key, each key once (KEYS: the
 *   checks' keys), decided one after another, each answered as the settle script answers it.
 * - `lua/check-<algorithm>-ban-hot.lua`: checks alike, all on one key (ARGV begins with how many), the
 *   key read and written once.
 *
 * KEYS[1]  the check's key: the policy's fields, then the ban's two (refusals in a row, when the ban ends)
 * ARGV     as the policy's single-check script (`single-check.ts`): the policy's numbers, then the ban's
 *          refusals in a row and ms, then the cost (in units for an algorithm that reads it so), the
 *          deadline, and now unless it is the server's
 * Returns  as the settle script: { now, applied, the policy's fields, when the ban ends (0: none) }
 */
import type { Algorithm, AlgorithmLua } from '../../../algorithms/algorithm.js';
import { ALGORITHM_LUA } from '../../../algorithms/registry.js';
import {
  batchPrelude,
  hotKeyWrite,
  KEY_READ,
  KEYS_READ_AT_ONCE,
  newOrStoredWrite,
  UNREAD_ANSWERED,
} from './batch-check.js';
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
  const ban = banParts(algorithm);
  const header = `-- A single check (${algorithm.name}) with a ban: one consume of one policy, alone in its call.
-- KEYS[1]  the check's key: ${ban.policy.join(':')} (the policy), then refusals in a row and when the ban ends
-- ARGV     ${ban.argumentNames}, deadline ('' none), now ('' or absent: the server's)
-- Path: read the state (-2: Redis refused the key), bring it to now; banned, refuse and change nothing;
-- else if the cost fits, apply it and start the refusals again, if not count one more (a ban at after),
-- and write (or delete) the state. Answers { now, applied, the policy's fields, when the ban ends (0: none) }.`;
  const numbers = ban.numbers;
  return withLibrary(
    header,
    `
${prelude(`local ${numbers.join(', ')} = ${numbers.map((_, k) => `argv[${k + 1}] + 0`).join(', ')}`, (k) => String(numbers.length + 1 + k), false, ban.cost)}${ban.decide(
  (values) => `return { now, ${values.join(', ')} }`,
)}`,
  );
}

/**
 * The batch script of one policy of `algorithm` with a ban, for checks each on a key of its own and alike
 * but for their key (a login route under load): the single-check script's work for each key. It answers
 * as the settle script does with one shape: { now, then per check: applied (1 or 0), the policy's fields
 * and when the ban ends, or -2 and Redis's error }; past the deadline, -1 per check.
 */
export function banBatchCheckLua(algorithm: Algorithm): string {
  const ban = banParts(algorithm);
  const header = `-- A batch of single checks (${algorithm.name}) with a ban: a consume of one policy on each key, each key once, all alike but the key.
-- KEYS     the checks' keys: ${ban.policy.join(':')} (the policy), then refusals in a row and when the ban ends
-- ARGV     ${ban.argumentNames}, deadline ('' none), now ('' or absent: the server's)
-- Path: past the deadline, -1 for every check; else read every key's state (one MGET), and per key, as
-- the single-check script: bring the state to now; banned, refuse and change nothing; else apply the
-- cost or count a refusal, and write (or delete) the state.
-- Answers { now, then per check: applied (1 or 0), the policy's fields and when the ban ends, or -2 and
-- Redis's error }; last, when Redis refused the MGET, its error.`;
  // Each check's answer ends its pass of the loop (\`break\`: the next key).
  const answered = (values: readonly string[]) =>
    `${values.map((_, k) => `answers[n + ${k + 1}]`).join(', ')} = ${values.join(', ')}
n = n + ${values.length}
break`;
  return withLibrary(
    header,
    `
local argv, keys = ARGV, KEYS
${batchPrelude(ban.numbers, ban.cost, 1, '#keys')}
${KEYS_READ_AT_ONCE}
for c = 1, #keys do
  local key = keys[c]
  repeat
    ${indented(KEY_READ, 4)}
    if err then
      ${answered(['-2', 'err'])}
    end
    ${ban.decide(answered, true).trimEnd()}
  until true
end
${UNREAD_ANSWERED}
return answers
`,
  );
}

/**
 * The batch script of one policy of `algorithm` with a ban, for checks all on one key and alike (a login
 * under attack on one account): the key read once, each check decided in turn on the state the one before
 * left, as the settle script decides them, and the state written once. It answers as the ban's batch
 * script for distinct keys.
 */
export function banHotCheckLua(algorithm: Algorithm): string {
  const ban = banParts(algorithm);
  const header = `-- A batch of single checks (${algorithm.name}) with a ban on one key: consumes of one policy, all alike.
-- KEYS[1]  the key: ${ban.policy.join(':')} (the policy), then refusals in a row and when the ban ends
-- ARGV     how many checks, then ${ban.argumentNames}, deadline ('' none), now ('' or absent: the server's)
-- Path: past the deadline, -1 for every check; else read the state once, and per check, as the
-- single-check script: bring it to now; banned, refuse and change nothing; else apply the cost or count a
-- refusal; then write (or delete) the state once.
-- Answers { now, then per check: applied (1 or 0), the policy's fields and when the ban ends, or -2 and
-- Redis's error }.`;
  // Each check's answer ends its pass of the loop (\`break\`: the next check).
  const answered = (values: readonly string[]) =>
    `${values.map((_, k) => `answers[n + ${k + 1}]`).join(', ')} = ${values.join(', ')}
n = n + ${values.length}
break`;
  return withLibrary(
    header,
    `
local argv, key = ARGV, KEYS[1]
local count = argv[1] + 0
${batchPrelude(ban.numbers, ban.cost, 2, 'count')}
local raw = redis.pcall('GET', key)
if raw and raw.err then -- a refusal (a string's err is nil)
  for c = 1, count do answers[2 * c], answers[2 * c + 1] = -2, raw.err end
  return answers
end
${ban.readState}-- quiet: the expiry of the state as the last check that changed it left it (none: deleted); dirty:
-- whether one changed it.
local quiet, dirty = 0, false
for _ = 1, count do
  repeat
    ${indented(ban.decideState(answered, false), 4)}
    stored, dirty = quiet > 0, true
    ${indented(answered(ban.answer('applied')), 4)}
  until true
end
${hotKeyWrite(ban.value)}
`,
  );
}

/** What both scripts of a policy of one algorithm with a ban are made of. */
function banParts(algorithm: Algorithm) {
  const lua = ALGORITHM_LUA.get(algorithm) as AlgorithmLua;
  const { fields } = algorithm;
  const { units, names } = onePolicyArguments(algorithm, false);
  const inline = (body: string) =>
    indented(inFieldLocals(units ? body.replaceAll(COST_IN_UNITS, 'units') : body, fields), 2);
  const policy = Array.from({ length: fields }, (_, k) => `f${k + 1}`);
  const all = [...policy, 'refusals', 'bannedUntil'];
  const parse = fieldsRead(all);
  const reply = (x: string) => `${SAFE(x)} and ${x} or format('%.17g', ${x})`;
  const answer = (applied: string) => [applied, ...policy.map(reply), reply('bannedUntil')];
  const refused = ['-2', 'written.err'];
  // The state as read from `raw`, in locals.
  const readState = `local stored, ${all.join(', ')} = raw and true or false, ${fieldList(all.length, () => 'false')}
if raw then
  local from, sep = 1
  repeat
    ${parse}
  until true
end
`;
  /**
   * Lua that decides one check on the state in locals, as far as its expiry (`quiet`, declared local with
   * `written` when `declare`): a check refused by a ban in force is answered by `answered`, which ends it.
   */
  const decideState = (answered: (values: readonly string[]) => string, declare: boolean) => `do
  ${inline(lua.current)}
end
-- A ban that has run out is over, and its count starts again.
if not stored or (bannedUntil > 0 and bannedUntil <= now) then refusals, bannedUntil = 0, 0 end
if bannedUntil > now then
  ${answered(answer('0'))}
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
${declare ? 'local quiet, written' : 'quiet'} = ${inline(lua.idle)}${declare ? ', nil' : ''}
if bannedUntil - now > quiet then quiet = bannedUntil - now end
`;
  // The state written, as text: whole numbers as such, any other with all its digits.
  const value = `if ${all.map((x) => `(${SAFE(x)})`).join('\nand ')} then
  value = format('${all.map(() => '%d').join(':')}', ${all.join(', ')})
else
  value = ${all.map((x) => `(${SAFE(x)} and format('%d', ${x}) or format('%.17g', ${x}))`).join("\n.. ':' .. ")}
end`;
  const written = `written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))`;
  /**
   * Lua that decides the check on the state `raw` has read, every answer (a list of Lua values after
   * now) given by `answered`, which ends the check; `readAtOnce`: `raw` was read by a batch's MGET (see
   * `newOrStoredWrite`).
   */
  const decide = (
    answered: (values: readonly string[]) => string,
    readAtOnce = false,
  ) => `${readState}${decideState(answered, true)}if quiet > 0 then
  local value
  ${indented(value, 2)}
  ${indented(readAtOnce ? newOrStoredWrite(written) : written, 2)}
  if written.err then
    ${answered(refused)}
  end
elseif raw then
  -- A number, or a refusal (a table).
  written = redis.pcall('DEL', key)
  if type(written) == 'table' then
    ${answered(refused)}
  end
end
-- A Lua number in a reply is cut to an integer: any other is answered with all its digits.
${answered(answer('applied'))}
`;
  return {
    policy,
    numbers: [...names, 'after', 'duration'],
    cost: units ? 'units' : 'cost',
    argumentNames: `limit${units ? '' : ', windowMs'}${readsCapacity(algorithm) ? ', capacityUnits' : ''}, after, durationMs (the ban), then ${units ? 'cost * windowMs' : 'cost'}`,
    readState,
    decideState,
    value,
    answer,
    decide,
  };
}
