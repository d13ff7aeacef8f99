/**
 * Generates the single-check scripts, one per algorithm: what the settle script does for the commonest
 * call of all, a consume of one policy with no ban, penalty or override, alone in its call (a fleet of
 * modestly loaded processes sends mostly these). Each answers exactly as the settle script would, in its
 * layout, from a body with no set or shape to parse, no batch to hold and no function defined: Redis
 * runs a script's whole body on every call, and pays for every argument it is sent, so what a call does
 * not use is not in it. Numbers are read from their text by arithmetic (`argv[1] + 0`): the conversion
 * `tonumber` makes, without the cost of calling a function.
 *
 * KEYS[1]  the check's key, as for the settle script
 * ARGV     the policy's limit and windowMs (and, for an algorithm that reads it, its capacityUnits), then
 *          the check's cost and deadline, and its now when the store has a clock of its own (absent: the
 *          server's), each as the settle script's shape has it (`wire.ts`); for an algorithm that reads
 *          the cost only in units (`readsCostInUnits`), no windowMs, and the cost times windowMs
 * Returns  { now, then the check's answer as the settle script gives it }; or, for a check applied and
 *          written in whole numbers by a script that reads no override, the same as text: the state as
 *          written, then now as ms (a store's clock) or the server's seconds and microseconds, left out
 *          where the algorithm's `nowField` holds it ('f1:f2[:now | :seconds:microseconds]')
 */
import type { Algorithm, AlgorithmLua } from '../../../algorithms/algorithm.js';
import { ALGORITHM_LUA } from '../../../algorithms/registry.js';
import { fieldList, fieldsRead, inFieldLocals } from './fast-paths.js';

/** Whether an algorithm's single-check script is sent the policy's capacity. */
export function readsCapacity(algorithm: Algorithm): boolean {
  const lua = ALGORITHM_LUA.get(algorithm) as AlgorithmLua;
  return [lua.current, lua.fits, lua.apply, lua.idle].some((body) => /\bcapacity\b/.test(body));
}

/**
 * Whether an algorithm reads the check's cost and the policy's window only as their product, the cost in
 * units (`cost * window`): its single-check script (one that reads no override) is then sent that
 * product in place of both, one argument and one conversion fewer.
 */
export function readsCostInUnits(algorithm: Algorithm): boolean {
  const lua = ALGORITHM_LUA.get(algorithm) as AlgorithmLua;
  return [lua.current, lua.fits, lua.apply, lua.idle].every(
    (body) => !/\b(cost|window)\b/.test(body.replaceAll(COST_IN_UNITS, '')),
  );
}

/** The cost in units, as an algorithm's Lua writes it. */
export const COST_IN_UNITS = 'cost * window';

/**
 * An algorithm's Lua body, indented by `spaces` on every line but the first (which the template
 * indents), as if it had been written there.
 */
export function indented(body: string, spaces: number): string {
  const lines = body.replace(/^\n+|\s+$/g, '').split('\n');
  const margin = Math.min(
    ...lines.filter((line) => line.trim() !== '').map((line) => /^ */.exec(line)?.[0].length ?? 0),
  );
  return lines.map((line, i) => (i === 0 ? '' : ' '.repeat(spaces)) + line.slice(margin)).join('\n');
}

/**
 * What every single-check script does first (after the library functions it calls, `withLibrary`): its
 * locals, then `policy` (Lua that reads the policy arguments), then the check's cost, deadline and now
 * (ARGV[`argument(0)`] on), with now as text too for a script that may answer as text (`textAnswer`); a
 * check past its deadline answers -1, and `raw` is the key's state as read (a key Redis refuses to read
 * answers -2).
 */
export function prelude(
  policy: string,
  argument: (k: number) => string,
  textAnswer: boolean,
  cost = 'cost',
): string {
  const clock = textAnswer
    ? `-- clock, usec: now as text, for an answer given as text (the server's seconds and microseconds).
local clock, usec = now, nil
if now then
  now = now + 0
else
  local time = redis.call('TIME')
  clock, usec = time[1], time[2]
  local us = usec + 0
  now = clock * 1000 + (us - us % 1000) / 1000
end`
    : `if now then
  now = now + 0
else
  local time = redis.call('TIME')
  now = time[1] * 1000 + floor(time[2] / 1000)
end`;
  return `local argv, key = ARGV, KEYS[1]
${policy}
local ${cost}, deadline, now = argv[${argument(0)}] + 0, argv[${argument(1)}], argv[${argument(2)}]
${clock}
if deadline ~= '' and now > deadline + 0 then return { now, -1 } end

local raw = redis.pcall('GET', key)
if raw and raw.err then return { now, -2, raw.err } end -- a refusal (a string's err is nil)
`;
}

/** The library functions a script may call, as the locals it reads them from. */
const LIBRARY = [
  ['tonumber', 'tonumber'],
  ['min', 'math.min'],
  ['max', 'math.max'],
  ['floor', 'math.floor'],
  ['ceil', 'math.ceil'],
  ['find', 'string.find'],
  ['sub', 'string.sub'],
  ['match', 'string.match'],
  ['format', 'string.format'],
] as const;

/**
 * `lua` after its `header` (a comment: what it takes, its path, what it answers) and a local for each
 * library function it calls (a local is read faster than a global).
 */
export function withLibrary(header: string, lua: string): string {
  const used = LIBRARY.filter(([name]) => new RegExp(`\\b${name}\\(`).test(lua));
  const names = used.map(([name]) => name).join(', ');
  return `\n${header}\nlocal ${names} = ${used.map(([, value]) => value).join(', ')}${lua}`;
}

/**
 * The arguments of a policy of `algorithm` in the script of several policies, after its code: the
 * limit and window, and the capacity for an algorithm that reads it.
 */
export function policyNamesOf(algorithm: Algorithm): string[] {
  return readsCapacity(algorithm) ? ['limit', 'window', 'capacity'] : ['limit', 'window'];
}

/**
 * What a script of one policy of `algorithm` is sent of the policy (`names`, its locals, in ARGV order),
 * and whether the check's cost comes in units (`cost * window`, named `units`; see
 * {@link readsCostInUnits}), as `singleCheckArgs` in `wire.ts` sends them.
 */
export function onePolicyArguments(
  algorithm: Algorithm,
  overridable: boolean,
): { units: boolean; names: string[] } {
  const units = !overridable && readsCostInUnits(algorithm);
  const names = ['limit', ...(units ? [] : ['window']), ...(readsCapacity(algorithm) ? ['capacity'] : [])];
  return { units, names };
}

/** A whole number a double holds exactly: written and answered in plain digits. */
export const SAFE = (x: string) => `${x} % 1 == 0 and ${x} > -9007199254740992 and ${x} < 9007199254740992`;

/**
 * {@link SAFE} for a field that may hold now (the algorithm's `nowField`, `isNow`): now, a whole number
 * of ms whether Redis's or a store's clock gave it, is safe without the arithmetic that tests it.
 */
export const SAFE_OR_NOW = (x: string, isNow: boolean) => (isNow ? `${x} == now or ${SAFE(x)}` : SAFE(x));

/**
 * The single-check script of `algorithm`, as Redis runs it; `overridable`: for a limiter that reads
 * overrides, the key's override read beside it (`<key>:o`, as the settle script reads it), its limits
 * decided by while it is in force, what was written under it rebased once it has ended, and the override
 * answered last (0: none).
 */
export function singleCheckLua(algorithm: Algorithm, overridable = false): string {
  const { header, policyNames, cost, body } = singleCheckParts(algorithm, overridable);
  const policyValues = fieldList(policyNames.length, (k) => `argv[${k}] + 0`);
  const a = policyNames.length + 1; // where the check's arguments begin
  return withLibrary(
    header,
    `
${prelude(`local ${policyNames.join(', ')} = ${policyValues}`, (k) => String(a + k), !overridable, cost)}${body}`,
  );
}

/**
 * What a single-check script of `algorithm` is made of: its header, the policy's arguments (`policyNames`,
 * in ARGV order) and the cost's name, and its `body`: the Lua after the prelude, which decides the check
 * on the state `raw` has read of `key` and returns the answer.
 */
export function singleCheckParts(
  algorithm: Algorithm,
  overridable: boolean,
): { header: string; policyNames: string[]; cost: string; body: string } {
  const lua = ALGORITHM_LUA.get(algorithm) as AlgorithmLua;
  const { fields } = algorithm;
  const { units, names: policyNames } = onePolicyArguments(algorithm, overridable);
  const inline = (body: string, spaces = 2) =>
    indented(inFieldLocals(units ? body.replaceAll(COST_IN_UNITS, 'units') : body, fields), spaces);
  const f = (k: number) => `f${k}`;
  const locals = fieldList(fields, f);
  const capacity = readsCapacity(algorithm);
  const parse = fieldsRead(Array.from({ length: fields }, (_, k) => f(k + 1)));
  const whole = fieldList(fields, (k) => `(${SAFE_OR_NOW(f(k), k === lua.nowField)})`, '\nand ');
  const digits = fieldList(fields, () => '%d', ':');
  const anyNumber = fieldList(
    fields,
    (k) => `(${SAFE(f(k))} and format('%d', ${f(k)}) or format('%.17g', ${f(k)}))`,
    "\n.. ':' .. ",
  );
  const header = `-- A single check (${algorithm.name}${overridable ? ', reading overrides' : ''}): one consume of one policy, alone in its call.
-- KEYS[1]  the check's key${overridable ? "; its override beside it, at KEYS[1]..':o'" : ''}
-- ARGV     limit${units ? '' : ', windowMs'}${capacity ? ', capacityUnits' : ''}, then ${units ? 'cost * windowMs' : 'cost'}, deadline ('' none), now ('' or absent: the server's)
-- Path: read the state (-2: Redis refused the key), ${overridable ? 'the override in force or ended, ' : ''}bring it to now, and if the cost fits,
-- apply it and write (or delete) the state. Answers { now, applied, the fields${overridable ? ', the override' : ''} }; -1: past its deadline.${overridable ? '' : textAnswerNote(fieldList(fields, f, ':'), lua.nowField)}`;
  const body = `local stored, ${locals} = raw and true or false, ${fieldList(fields, () => 'false')}
if raw then
  local from, sep = 1
  repeat
    ${parse}
  until true
end
${overridable ? overrideSection(lua, capacity, inline) : keptExpiry([{ lua, inline: (body) => inline(body) }])}do
  ${inline(lua.current)}
end
local applied = 0
if ${inline(lua.fits)} then
  applied = 1
  ${inline(lua.apply)}
  local quiet, written = ${inline(lua.idle)}, nil
  if quiet < 0 then quiet = 0 end
${overridable ? ownIdle(capacity, inline(lua.idle, 4), capacity && lua.rebase.trim() !== '' ? inline(lua.rebase, 6) : '', fields) : ''}${writtenAndAnswered(
  overridable
    ? overridableWrite(whole, digits, locals, anyNumber)
    : textAnswerWrite(whole, digits, locals, anyNumber, lua.nowField, lua.expiryKept !== undefined),
  Array.from({ length: fields }, (_, k) => f(k + 1)),
  whole,
  overridable ? 'override' : undefined,
)}`;
  return { header, policyNames, cost: units ? 'units' : 'cost', body };
}

/**
 * How a single-check script ends once its `quiet` is known: the state kept for `quiet` ms by `write`
 * (Lua that sets `written`, or answers as text), or deleted; then, unless answered as text, `{ now,
 * applied, fields }` and `extra` (a last Lua value, if any), the fields as they are where `whole` (the
 * condition `write` tests too) holds.
 */
export function writtenAndAnswered(
  write: string,
  fields: readonly string[],
  whole: string,
  extra?: string,
): string {
  const reply = fields.map((f) => `${SAFE(f)} and ${f} or format('%.17g', ${f})`).join(',\n');
  return `  if quiet > 0 then
${write}    if written.err then return { now, -2, written.err } end
  elseif raw then
    -- A number, or a refusal (a table).
    written = redis.pcall('DEL', key)
    if type(written) == 'table' then return { now, -2, written.err } end
  end
end
-- A Lua number in a reply is cut to an integer: any other is answered with all its digits.
if ${whole} then
  return { now, applied, ${fields.join(', ')}${extra === undefined ? '' : `, ${extra}`} }
end
return { now, applied,
${reply}${extra === undefined ? '' : `,\n${extra}`} }
`;
}

/** The header's line on the answer as text (see {@link textAnswerWrite}). */
function textAnswerNote(fields: string, nowField: number | undefined): string {
  const unless = nowField === undefined ? '' : `, unless f${nowField} is now`;
  return `\n-- Applied and written in whole numbers, it answers '${fields}' then ':now' or ':seconds:microseconds'${unless}.`;
}

/** The write of an overridable script's state: its answer, which ends with the override, is a table. */
function overridableWrite(whole: string, digits: string, locals: string, anyNumber: string): string {
  return `    local value
    if ${whole} then
      value = format('${digits}', ${locals})
    else
      value = ${anyNumber}
    end
    written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))
`;
}

/**
 * The write of a state in whole numbers, answered as text: the state as written, then now unless the
 * algorithm's `nowField` holds it (see \`textAnswerOf\` in \`wire.ts\`). Redis turns a table into its
 * reply at a cost several times a string's, and a number into text at the cost of a call to sprintf:
 * the text written is answered, with the time as Redis gave it.
 */
export function textAnswerWrite(
  whole: string,
  digits: string,
  locals: string,
  anyNumber: string,
  nowField: number | undefined,
  keepable = false,
): string {
  const ownTime = nowField === undefined ? '' : `      if f${nowField} == now then return value end\n`;
  return `    if ${whole} then
      local value = format('${digits}', ${locals})
      ${stateWrite('value', keepable)}
      if written.err then return { now, -2, written.err } end
${ownTime}      if usec then return value .. ':' .. clock .. ':' .. usec end
      return value .. ':' .. clock
    end
    ${keepable ? `local value = ${anyNumber}\n${stateWrite('value', true)}` : stateWrite(anyNumber, false)}
`;
}

/**
 * Lua that writes the state `value` (an expression) to `key` for `quiet` ms; for a `keepable` state, with
 * the expiry the stored one had where `kept` says a consume left it there (see `AlgorithmLua.expiryKept`).
 */
export function stateWrite(value: string, keepable: boolean): string {
  const withPx = `written = redis.pcall('SET', key, ${value}, 'PX', format('%d', quiet))`;
  if (!keepable) return withPx;
  return `if kept then
  written = redis.pcall('SET', key, ${value}, 'KEEPTTL')
else
  ${withPx}
end`;
}

/**
 * Lua that sets `kept`, before `current` runs: whether the state as read is one a consume leaves to
 * expire when it does, by each policy's algorithm's `expiryKept` (its steps' Lua made the script's by
 * `inline`), for {@link stateWrite}; '' when an algorithm has none.
 */
export function keptExpiry(
  policies: readonly { readonly lua: AlgorithmLua; readonly inline: (body: string) => string }[],
): string {
  const conditions: string[] = [];
  for (const { lua, inline } of policies) {
    if (lua.expiryKept === undefined) return '';
    conditions.push(`(${inline(lua.expiryKept)})`);
  }
  return `-- kept: the state goes on to expire when the stored one does (a window that goes on).
local kept = stored and ${conditions.join(' and ')}
`;
}

/**
 * The override part of an overridable single-check script, after the state is read: the settle
 * script's \`overrideOf()\` for one policy (a stored override that does not fit is none), then its
 * limits while it is in force, or else the rebase of a state written under it.
 */
function overrideSection(
  lua: AlgorithmLua,
  capacity: boolean,
  inline: (body: string, spaces?: number) => string,
): string {
  const own = ownLimits(capacity, lua.idle);
  const kept = own.map(([, ownName]) => `, ${ownName}`).join('');
  const limits = capacity ? 'limit, capacity' : 'limit';
  const overridden = capacity ? 'ovLimit, ovBurst * window' : 'ovLimit';
  const rebase =
    lua.rebase.trim() === ''
      ? ''
      : `
    elseif stored then
      -- Ended: what was written under it is read in its terms, then in the policy's own.
      local wasLimit, was, ends, before = ovLimit, ovBurst * window, expires, expires
      ${inline(lua.rebase, 6)}`;
  const keptNote = own.length === 0 ? '' : `;${kept.slice(1)}: the policy's own`;
  return `-- override: the override in force, as stored, answered last (0: none)${keptNote}.
local override, ends${kept} = 0, 0${own.map(([name]) => `, ${name}`).join('')}
local record = redis.pcall('GET', key .. ':o')
if record and not record.err then -- a string (a refusal is a table with an err)
  local first = find(record, ':', 1, true)
  local second = first and find(record, ':', first + 1, true)
  local expires = second and tonumber(sub(record, 1, first - 1))
  local ovLimit = second and tonumber(sub(record, first + 1, second - 1))
  local ovBurst = second and not find(record, ':', second + 1, true) and tonumber(sub(record, second + 1))
  if ovBurst and expires >= 0 and expires % 1 == 0 and ovLimit >= 1 and ovLimit % 1 == 0
    and ovBurst >= 1 and ovBurst % 1 == 0 then
    if expires == 0 or expires > now then
      override, ends, ${limits} = record, expires, ${overridden}${rebase}
    end
  end
end
`;
}

/** The policy's own limits that its `idle` step reads (an override changes them), and their copies' names. */
function ownLimits(capacity: boolean, idle: string): [string, string][] {
  return [
    ...(/\blimit\b/.test(idle) ? ([['limit', 'ownLimit']] as [string, string][]) : []),
    ...(capacity && /\bcapacity\b/.test(idle) ? ([['capacity', 'ownCapacity']] as [string, string][]) : []),
  ];
}

/**
 * While an override is in force, a state is kept, too, until the policy's own limits would have refilled
 * it once the override is over (as the settle script keeps it): for an algorithm that rebases (`rebase`,
 * inlined; '' for none), also as its `fields` read in the policy's terms from the override's end.
 */
function ownIdle(capacity: boolean, idle: string, rebase: string, fields: number): string {
  const own = ownLimits(capacity, idle);
  const restore =
    own.length === 0
      ? ''
      : `${own.map(([name]) => name).join(', ')} = ${own.map(([, value]) => value).join(', ')}\n    `;
  const locals = fieldList(fields, (k) => `f${k}`);
  const later =
    rebase === ''
      ? ''
      : `
    if ends > 0 then
      -- Read in its terms from the override's end, as the next check will read it: what was used of a
      -- larger burst stays used, and takes longer to refill than the level alone says.
      local ${locals} = ${locals}
      ${rebase}
      quiet = max(quiet, ${idle})
    end`;
  const was = rebase === '' ? '' : 'local wasLimit, was, before = limit, capacity, ends\n    ';
  return `  if override ~= 0 then
    ${was}${restore}quiet = max(quiet, (ends > 0 and ends - now or 0) + (${idle}))${later}
  end
`;
}

/**
 * The single-check script of a set of several policies (any algorithms, all or none), as Redis runs it.
 *
 * ARGV  n, then per policy its algorithm code, limit and windowMs, and capacityUnits for an algorithm
 *       that reads it (`policiesCheckArgs` in `wire.ts`); then the cost, the deadline, and now unless it is
 *       the server's. Each algorithm's branch knows how many arguments and fields it has.
 */
export function policiesCheckLua(): string {
  // Each algorithm's steps, as the branches of an \`if\` on its code written \`depth\` spaces in; then the
  // next policy's argument (p) and field (o).
  const branches = (depth: number, step: (body: (lua: string) => string, lua: AlgorithmLua) => string) =>
    [...ALGORITHM_LUA]
      .map(([algorithm, lua], i) => {
        const inner = ' '.repeat(depth + 2);
        const names = policyNamesOf(algorithm);
        const steps = step((body) => indented(body, depth + 2), lua);
        // The policy's numbers its steps read, as locals.
        const used = names.flatMap((name, k) => (new RegExp(`\\b${name}\\b`).test(steps) ? [[name, k]] : []));
        const read = `local ${used.map(([name]) => name).join(', ')} = ${used.map(([, k]) => `n[p + ${Number(k) + 1}]`).join(', ')}`;
        const next = `p, o = p + ${names.length + 1}, o + ${algorithm.fields}`;
        return `${i === 0 ? 'if' : `${' '.repeat(depth)}elseif`} code == '${algorithm.code}' then\n${inner}${read}\n${inner}${steps}\n${inner}${next}\n`;
      })
      .join('');
  const capacityReaders = [...ALGORITHM_LUA.keys()]
    .filter(readsCapacity)
    .map(({ name }) => name)
    .join(', ');
  const header = `-- A single check of several policies: one consume, alone in its call, atomic across the policies.
-- KEYS[1]  the check's key, every policy's state in one string
-- ARGV     n, then per policy its code, limit, windowMs, and capacityUnits if it is a ${capacityReaders}; then cost, deadline, now
-- Path: read the state (-2: Redis refused the key), bring each policy to now; if the cost fits them all,
-- apply it to each and write (or delete) the state. Answers { now, applied, every field }; -1: past its deadline.
-- Applied and written in whole numbers, it answers every field, then ':now' or ':seconds:microseconds'.`;
  // n: the policies' numbers by argument, read once for both passes; fields: how many the state holds.
  const parse = [...ALGORITHM_LUA.keys()]
    .map((algorithm, i) => {
      const names = policyNamesOf(algorithm);
      const reads = names.map((_, k) => `n[p + ${k + 1}]`).join(', ');
      const values = names.map((_, k) => `argv[p + ${k + 1}] + 0`).join(', ');
      return `${i === 0 ? '  if' : '  elseif'} code == '${algorithm.code}' then
    ${reads} = ${values}
    p, fields = p + ${names.length + 1}, fields + ${algorithm.fields}
`;
    })
    .join('');
  const policies = `-- n: the policies' numbers by argument, read once for both passes; fields: how many the state holds.
local count, n, p, fields = argv[1] + 0, {}, 2, 0
for _ = 1, count do
  local code = argv[p]
${parse}  else
    return redis.error_reply('unknown algorithm code ' .. tostring(code))
  end
end`;
  return withLibrary(
    header,
    `
${prelude(policies, (k) => (k === 0 ? 'p' : `p + ${k}`), true)}-- st: every policy's fields, in policy order, brought to now; fitting: whether the cost fits them all.
local stored, st = raw and true or false, {}
if raw then
  local from = 1
  for k = 1, fields do
    local sep = find(raw, ':', from, true)
    st[k] = sub(raw, from, sep and sep - 1) + 0
    if not sep then break end
    from = sep + 1
  end
end
local fitting, o = true, 1
p = 2
for _ = 1, count do
  local code = argv[p]
  ${branches(2, (body, lua) => `${body(lua.current)}\n    if fitting and not (${body(lua.fits)}) then fitting = false end`)}  end
end
local applied = 0
if fitting then
  applied = 1
  local quiet = 0
  p, o = 2, 1
  for _ = 1, count do
    local code = argv[p]
    ${branches(4, (body, lua) => `${body(lua.apply)}\n      quiet = max(quiet, ${body(lua.idle)})`)}    end
  end
  local written
  if quiet > 0 then
    local whole = true
    for k = 1, fields do
      local x = st[k]
      if not (${SAFE('x')}) then whole = false break end
    end
    local value
    if whole then -- one format call for all of them: '%d:%d:…'
      value = format(sub(string.rep('%d:', fields), 1, -2), unpack(st, 1, fields))
    else
      value = {}
      for k = 1, fields do
        local x = st[k]
        value[k] = (${SAFE('x')}) and format('%d', x) or format('%.17g', x)
      end
      value = table.concat(value, ':')
    end
    written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))
    -- Written in whole numbers, the answer is text: the state as written, then now.
    if whole and not written.err then
      if usec then return value .. ':' .. clock .. ':' .. usec end
      return value .. ':' .. clock
    end
  elseif raw then
    written = redis.pcall('DEL', key)
  end
  if type(written) == 'table' and written.err then return { now, -2, written.err } end
end
-- A Lua number in a reply is cut to an integer: any other is answered with all its digits.
local answer = { now, applied }
for k = 1, fields do
  local x = st[k]
  answer[k + 2] = (${SAFE('x')}) and x or format('%.17g', x)
end
return answer
`,
  );
}
