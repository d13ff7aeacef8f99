/**
 * Generates the settle script, the one Redis runs to decide checks: `settlePolicies` (`algorithms/settle.ts`)
 * in Lua, around each algorithm's own Lua (`algorithms/<name>/<name>.lua.ts`, step for step with its
 * TypeScript). One EVALSHA decides a batch of checks, one after another; a script runs atomically, so each
 * check is atomic across all of its key's policies, whatever their algorithms. What it reads and answers
 * is `wire.ts`'s.
 *
 * The store never runs this code: it runs the committed output (`lua/settle.lua`, and the module the
 * store imports, `scripts.generated.ts`; see `lua-files.ts`), so that what is reviewed is what
 * Redis runs. A test fails when they differ; `pnpm --filter @tollgate/core lua:write` rewrites them.
 *
 * Redis runs the script's whole body on every call, and in its Lua each table and closure made costs
 * time and garbage collection: the algorithms' steps are functions that branch on the algorithm's code,
 * not tables of closures, and a check makes no table of its own.
 *
 * A check takes one of three paths, and each holds every algorithm's steps:
 * - `settle`, the held path: the general one (several policies, a ban or a penalty, a key that comes
 *   more than once in the batch), the algorithms' steps as the functions `operation()` makes (the
 *   penalties' two only in a call that has a set with one). Its functions are made only in a call that
 *   takes it.
 * - `settleOne`: one policy and no ban or penalty, on a held key: steps inlined, fields in locals.
 * - `settleAlone`: `settleOne` for a key that comes once in its batch, with no held copy; also for a
 *   one-policy set that reads overrides, on a key with none in force (a key with an override in force
 *   takes the held path).
 */
import type { AlgorithmLua } from '../../../algorithms/algorithm.js';
import { BACKOFF_LUA } from '../../../algorithms/backoff/backoff.lua.js';
import { BAN_LUA } from '../../../algorithms/ban/ban.lua.js';
import { ALGORITHM_LUA } from '../../../algorithms/registry.js';
import { settleAlone, settleOne } from './fast-paths.js';

/** The settle script's Lua, as Redis runs it. */
export function settleScriptLua(): string {
  return `
-- The settle script: a batch of checks, each decided atomically, one after another (layout: wire.ts).
-- KEYS  a key per check;  ARGV  the policy sets, the shapes (now, deadline, cost, mode), a shape per check
-- Answers: each shape's now, then each check's status and state fields.
-- Paths a check takes:
--   settleAlone  one policy, no ban or penalty, its key once in the batch: read, decide, write at once
--   settleOne    the same on a key that comes more than once (held: read once, written at the end)
--   settle       the held path, heldPath(): several policies, a ban, a penalty, an override in force
-- Then the held keys are written, and a key Redis refused to write takes back its checks' answers.
local tonumber, min, max, floor, ceil = tonumber, math.min, math.max, math.floor, math.ceil
local find, sub = string.find, string.sub

-- A number as it is stored: a whole one that a double holds exactly (below 2^53) in plain digits, which
-- '%d' writes exactly and faster than Lua's own conversion ('%.14g', which would also round beyond 14
-- digits); any other with all its digits.
local format = string.format
local function num(x)
  if x % 1 == 0 and x > -9007199254740992 and x < 9007199254740992 then return format('%d', x) end
  return format('%.17g', x)
end

-- A number as it is answered: a whole one that a double holds exactly (below 2^53) as it is, since a
-- reply carries it as an integer; any other (a Lua number in a reply is truncated) with all its digits.
local function reply(x)
  if x % 1 == 0 and x > -9007199254740992 and x < 9007199254740992 then return x end
  return format('%.17g', x)
end

-- sets[s] = { code, fields, limit, window, capacity, (and so on for each policy) }, with .ban =
-- { after, duration } or nil, .backoff and .restart (exponentialBackoff, continueExceeding), .rule
-- (whether a refusal is written: any of the three), .overridable (whether its checks read their key's
-- override), .fields, how many numbers its stored state has, .one, whether it is one policy and none
-- of the four, and .lone, whether it is one policy and overrides only. banned, backedOff, penalized:
-- whether some set has a ban, a backoff, either penalty.
local argv, sets, a, banned, backedOff, penalized = ARGV, {}, 2, false, false, false
for s = 1, argv[1] + 0 do
  local last = a + 5 * argv[a]
  local after, penalties, set = argv[last + 1] + 0, argv[last + 3] + 0, nil
  if last == a + 5 and after == 0 and penalties == 0 then
    -- The commonest set, made at its full size: a table that grows costs Redis more than filling it.
    set = { argv[a + 1] + 0, argv[a + 2] + 0, argv[a + 3] + 0, argv[a + 4] + 0,
      argv[a + 5] + 0, fields = 0, one = true }
    set.fields = set[2]
  else
    local fields = 0
    set = { one = false }
    for i = a + 1, last do set[i - a] = argv[i] + 0 end
    for i = 2, last - a, 5 do fields = fields + set[i] end
    if after > 0 then
      set.ban = { after, argv[last + 2] + 0 }
      banned = true
      fields = fields + 2
    end
    set.backoff, set.restart, set.overridable = penalties % 2 == 1, penalties % 4 >= 2, penalties >= 4
    -- One policy and no ban or penalty, but reading overrides: a key with none takes the fast path.
    set.lone = last == a + 5 and after == 0 and penalties == 4
    set.rule = after > 0 or set.backoff or set.restart
    if set.backoff then fields = fields + 3 end
    backedOff, penalized = backedOff or set.backoff, penalized or set.backoff or set.restart
    set.fields = fields
  end
  sets[s] = set
  a = last + 4
end

-- The server's clock, read once for the whole batch when some check asks for it.
local serverNow
local function clock()
  if not serverNow then
    local time = redis.call('TIME')
    serverNow = time[1] * 1000 + floor(time[2] / 1000)
  end
  return serverNow
end

-- The answers so far (n of them), and where each check's begins.
local answers, n, starts = {}, 0, {}

local function refused(err)
  answers[n + 1], answers[n + 2] = -2, err
  n = n + 2
end

-- A key's override, read once per batch from the key beside its buckets' (\`<key>:o\`, the same hash
-- tag, so the same slot): 'expires:limit:burst:…' (expires 0: none; a limit and a burst per policy)
-- makes { expires, set = the set with those limits, raw }. false: none, or one that does not fit the set.
-- One that has ended is kept a while (see the override script): what was written under it is read in
-- its terms.
local overridden
local function overrideOf(key, set)
  overridden = overridden or {}
  local found = overridden[key]
  if found ~= nil then return found end
  found = false
  local raw = redis.pcall('GET', key .. ':o')
  if type(raw) == 'string' then
    local v, k, from, whole = {}, 0, 1, true
    while true do
      local sep = find(raw, ':', from, true)
      k = k + 1
      v[k] = tonumber(sub(raw, from, sep and sep - 1))
      if not v[k] or v[k] < (k == 1 and 0 or 1) or v[k] % 1 ~= 0 then whole = false end
      if not sep then break end
      from = sep + 1
    end
    if whole and k == 1 + 2 * #set / 5 then
      local copy = {}
      for name, x in pairs(set) do copy[name] = x end
      for p = 1, #set / 5 do
        local i = 5 * p - 4
        copy[i + 2], copy[i + 4] = v[2 * p], v[2 * p + 1] * set[i + 3]
      end
      found = { expires = v[1], set = copy, raw = raw }
    end
  end
  overridden[key] = found
  return found
end

-- Whether an override as overrideOf() reads it is in force at now.
local function inForce(ov, now)
  return ov and (ov.expires == 0 or ov.expires > now)
end
${settleAlone()}
-- The held path: for a key that comes more than once in the batch, and for a set of more than one policy
-- or with a ban or a penalty. Its functions are made only when a check takes it (heldPath() returns its
-- settle), since Redis makes each function of the script anew on every call.
--
-- Every key of the batch is read once and written once. A key the held path takes is held: held[key]
-- keeps its state between its checks as Redis would hold it, the fields themselves (held[key][1..]), and
--   stored   whether they are a stored state (false: none, or deleted since)
--   raw      the string read (false: none);  dirty  whether a check wrote since
--   n, px    how many fields, and the expiry, of the last write
--   err      why Redis refused the GET (and nothing else)
-- The held keys are written at the end of the script.
local held
-- waiting: whether some shape is a consume that may wait (mode 'wait').
local waiting = false
local function heldPath()
held = {}
${operation('current', 'st, o, stored, now')}${operation('fits', 'st, o, cost, now')}${rebaseFunction()}${operation('apply', 'st, o, cost')}${operation('refund', 'st, o, cost, since, now')}${operation('idle', 'st, o, now')}${BAN_LUA}
-- BAN: the ban's steps, when some set has a ban.
local BAN = banned and banSteps()
${BACKOFF_LUA}
-- BACKOFF: the backoff's steps, when some set has one.
local BACKOFF = backedOff and backoffSteps()

-- The algorithms' steps for penalties, restart (continueExceeding) and wait (exponentialBackoff), made
-- only when some set has one.
local function penaltySteps()
${operation('restart', 'st, o, cost, now')}${operation('wait', 'st, o, cost, now')}
return restart, wait
end
local restart, wait
if penalized then restart, wait = penaltySteps() end
${withinFunction()}
-- The answer of a check: applied, the first \`last\` state fields (the policies'), when its ban ends (nil:
-- its set has no ban), until when its backoff holds the client back (nil: its set has none), and the
-- override it was decided by (0: none; nil: its set reads none).
local function answer(applied, st, last, bannedUntil, backoffUntil, override)
  answers[n + 1] = applied
  for k = 1, last do answers[n + 1 + k] = reply(st[k]) end
  n = n + last + 1
  if bannedUntil then
    n = n + 1
    answers[n] = reply(bannedUntil)
  end
  if backoffUntil then
    n = n + 1
    answers[n] = reply(backoffUntil)
  end
  if override then
    n = n + 1
    answers[n] = override
  end
end

-- A refused consume under its set's rule, its ban's state at o and its backoff's at b: refusedBy() in
-- settle.ts, step for step.
local function refusedBy(set, st, o, b, cost, now)
  if set.ban then BAN.refused(set.ban, st, o, now) end
  if set.restart then
    local q = 1
    for i = 1, #set, 5 do
      local code, limit, window, capacity = set[i], set[i + 2], set[i + 3], set[i + 4]
      if not fits(code, limit, window, capacity, st, q, cost, now) then
        restart(code, limit, window, capacity, st, q, cost, now)
      end
      q = q + set[i + 1]
    end
  end
  if set.backoff then
    -- The policies' wait as the restarts left it; -1: the cost is more than some policy holds.
    local waited, q = 0, 1
    for i = 1, #set, 5 do
      local w = wait(set[i], set[i + 2], set[i + 3], set[i + 4], st, q, cost, now)
      if w < 0 or waited < 0 then waited = -1 else waited = max(waited, w) end
      q = q + set[i + 1]
    end
    if waited >= 0 then BACKOFF.refused(st, b, now, waited) end
  end
end
${settleOne()}
local function hold(key)
  local h = held[key]
  if h then return h end
  local raw = redis.pcall('GET', key)
  if type(raw) == 'table' then
    h = { err = raw.err }
  else
    -- Room for three fields from the start (growing a table costs); false, so a state cut short fails.
    h = { false, false, false, raw = raw, stored = raw and true or false, dirty = false, n = 0, px = 0 }
    if raw then
      local from, k = 1, 0
      while true do
        local sep = find(raw, ':', from, true)
        k = k + 1
        if not sep then h[k] = sub(raw, from) + 0 break end
        h[k] = sub(raw, from, sep - 1) + 0
        from = sep + 1
      end
    end
  end
  held[key] = h
  return h
end

-- A check works on a copy of its key's state, so one that writes nothing leaves it as it was; one copy
-- serves every check of the batch.
local st = {}
local function settle(key, set, now, cost, mode, since)
  local h = hold(key)
  if h.err then return refused(h.err) end
  if set.one and mode ~= 'wait' then return settleOne(h, set, now, cost, mode, since) end
  -- own: the set as the limiter sent it; set: as the key's override in force (ov) makes it; ended: the
  -- key's override that has ended, kept so that what was written under it is read in its terms.
  local own, ov, ended = set, false, false
  if set.overridable then
    ov = overrideOf(key, set)
    if inForce(ov, now) then set = ov.set else ended, ov = ov, false end
  end
  local override = own.overridable and (ov and ov.raw or 0)
  -- A consume that may wait (its since is the most ms it waits) fits when every policy can cover it
  -- within that long; from there on it is a consume.
  local maxWait = mode == 'wait' and since
  if maxWait then mode = 'consume' end
  -- st: every policy's state fields, then the ban's, then the backoff's, brought to now; fitting: whether
  -- cost fits.
  local stored, fitting, o = h.stored, true, 1
  if stored then for k = 1, set.fields do st[k] = h[k] end end
  if stored and ended then
    local was = ended.set
    for i = 1, #own, 5 do
      rebase(own[i], was[i + 2], was[i + 4], own[i + 2], own[i + 4], st, o, ended.expires, ended.expires)
      o = o + own[i + 1]
    end
    o = 1
  end
  for i = 1, #set, 5 do
    local code, limit, window, capacity = set[i], set[i + 2], set[i + 3], set[i + 4]
    current(code, limit, window, capacity, st, o, stored, now)
    if fitting then
      if maxWait then
        fitting = within(code, limit, window, capacity, st, o, cost, maxWait)
      elseif not fits(code, limit, window, capacity, st, o, cost, now) then
        fitting = false
      end
    end
    o = o + set[i + 1]
  end
  local last, ban, backoff = o - 1, set.ban, set.backoff
  local b = ban and o + 2 or o -- where the backoff's fields begin
  -- A key whose policies' states say no more than fresh ones, with no ban or hold in force, is as good as
  -- forgotten, whether Redis has forgotten it yet or not: its refusals in a row start again.
  local kept = stored
  if stored and ((ban and st[o] > 0) or (backoff and st[b] > 0))
    and not (ban and st[o + 1] > now) and not (backoff and st[b + 1] > now) then
    kept = false
    local q = 1
    for i = 1, #set, 5 do
      if idle(set[i], set[i + 2], set[i + 3], set[i + 4], st, q, now) > 0 then
        kept = true
        break
      end
      q = q + set[i + 1]
    end
  end
  if backoff then BACKOFF.current(st, b, kept) end
  if ban then BAN.current(st, o, kept, now) end
  local check = mode == 'consume' or mode == 'peek'
  if ban and check and BAN.banned(st, o, now) then
    return answer(0, st, last, st[o + 1], backoff and st[b + 1], override)
  end
  -- Held back: refused whatever the policies say, and (for a consume) one more refusal in the row.
  if check and backoff and st[b + 1] > now then fitting = false end
  if mode == 'peek' or (mode == 'consume' and not fitting and not set.rule) then
    return answer(fitting and 1 or 0, st, last, ban and 0, backoff and st[b + 1], override)
  end

  local applied = 1
  if mode == 'consume' and not fitting then
    -- A refusal changes nothing but what the rule says; the policies are written as they stand now.
    applied = 0
    refusedBy(set, st, o, b, cost, now)
  else
    local q = 1
    for i = 1, #set, 5 do
      if mode == 'refund' then
        refund(set[i], set[i + 2], set[i + 3], set[i + 4], st, q, cost, since, now)
      else
        apply(set[i], set[i + 2], set[i + 3], set[i + 4], st, q, cost)
      end
      q = q + set[i + 1]
    end
    if ban and mode == 'consume' then BAN.admitted(st, o) end
    if backoff and mode == 'consume' then BACKOFF.admitted(st, b) end
  end
  -- Kept until every state says no more than a fresh one; deleted when they already do.
  local quiet, q = 0, 1
  for i = 1, #set, 5 do
    quiet = max(quiet, idle(set[i], set[i + 2], set[i + 3], set[i + 4], st, q, now))
    q = q + set[i + 1]
  end
  local bannedUntil = 0
  if ban then
    quiet = max(quiet, BAN.idle(st, o, now))
    bannedUntil = st[o + 1]
  end
  if backoff then quiet = max(quiet, BACKOFF.idle(st, b, now)) end
  if ov then
    -- Kept, too, until the policies' own limits would have refilled it once the override is over, read in
    -- their terms from its end as the next check will read it: what was used of a larger burst stays used,
    -- and takes longer to refill than the level alone says.
    local remaining, q, was, later = ov.expires > 0 and ov.expires - now or 0, 1, ov.set, {}
    for i = 1, #own, 5 do
      quiet = max(quiet, remaining + idle(own[i], own[i + 2], own[i + 3], own[i + 4], st, q, now))
      if remaining > 0 then
        for k = 1, own[i + 1] do later[k] = st[q + k - 1] end
        rebase(own[i], was[i + 2], was[i + 4], own[i + 2], own[i + 4], later, 1, ov.expires, ov.expires)
        quiet = max(quiet, idle(own[i], own[i + 2], own[i + 3], own[i + 4], later, 1, now))
      end
      q = q + own[i + 1]
    end
  end
  h.dirty, h.stored = true, quiet > 0
  if quiet > 0 then
    for k = 1, set.fields do h[k] = st[k] end
    h.n, h.px = set.fields, quiet
  end
  return answer(applied, st, last, ban and bannedUntil, backoff and st[b + 1], override)
end

return settle
end

-- shapes[k] = { set, now, whether its deadline has passed, cost, mode, since (when a refund's tokens
-- were charged, now for none; for a wait, the most ms it waits), whether it waits }; its now is answered
-- first.
local shapes, K = {}, argv[a] + 0
for k = 1, K do
  local now, deadline, since = argv[a + 2], argv[a + 3], argv[a + 6]
  if now == '' then now = clock() else now = now + 0 end
  local mode = argv[a + 5]
  shapes[k] = { sets[argv[a + 1] + 0], now, deadline ~= '' and now > deadline + 0,
    argv[a + 4] + 0, mode, since == '' and now or since + 0, mode == 'wait' }
  if mode == 'wait' then waiting = true end
  answers[k] = now
  a = a + 6
end
a, n = a + 1, K

-- once[key]: whether the key comes only once in the batch (no table for a batch of one key). Its check
-- of one policy then needs no held copy: it reads the key, and writes it, itself.
local once
if #KEYS > 1 then
  once = {}
  for c = 1, #KEYS do
    local key = KEYS[c]
    once[key] = once[key] == nil
  end
end

local only, settle = K == 1 and shapes[1], nil
for c = 1, #KEYS do
  local shape, key = only or shapes[argv[a] + 0], KEYS[c]
  local set = shape[1]
  starts[c] = n + 1
  if shape[3] then
    n = n + 1
    answers[n] = -1
  elseif set.one and not shape[7] and (not once or once[key]) then
    settleAlone(key, set, shape[2], shape[4], shape[5], shape[6])
  elseif set.lone and not shape[7] and (not once or once[key]) and not overrideOf(key, set) then
    -- No override, in force or ended: the fast path decides, and the answer says so (0) unless Redis
    -- refused.
    settleAlone(key, set, shape[2], shape[4], shape[5], shape[6])
    if answers[starts[c]] ~= -2 then
      n = n + 1
      answers[n] = 0
    end
  else
    settle = settle or heldPath()
    settle(key, set, shape[2], shape[4], shape[5], shape[6])
  end
  a = a + 1
end

-- The held keys' writes. A key Redis refuses to write (no memory) changed nothing, so every check that
-- read it answers that: what they saw of it never landed.
if not held then return answers end
local failed
for key, h in pairs(held) do
  local written
  if h.dirty and h.stored then
    for k = 1, h.n do h[k] = num(h[k]) end
    written = redis.pcall('SET', key, table.concat(h, ':', 1, h.n), 'PX', format('%d', h.px))
  elseif h.dirty and h.raw then
    written = redis.pcall('DEL', key)
  end
  if type(written) == 'table' and written.err then
    failed = failed or {}
    failed[key] = written.err
  end
end
if not failed then return answers end
local kept, last = answers, n
answers, n = {}, K
for k = 1, K do answers[k] = kept[k] end
for c = 1, #KEYS do
  local from, to = starts[c], (starts[c + 1] or last + 1) - 1
  if failed[KEYS[c]] and kept[from] >= 0 then
    refused(failed[KEYS[c]])
  else
    for k = from, to do
      n = n + 1
      answers[n] = kept[k]
    end
  end
end
return answers
`;
}

/**
 * `rebase(code, wasLimit, was, limit, capacity, st, o, ends, before)`: each algorithm's `rebase` as one
 * Lua function (for the algorithms that change anything), for the settle script and the override script.
 */
export function rebaseFunction(): string {
  const branches = [...ALGORITHM_LUA]
    .filter(([, lua]) => lua.rebase.trim() !== '')
    .map(
      ([{ code }, lua], i) =>
        `${i === 0 ? 'if' : 'elseif'} code == ${code} then\n    ${lua.rebase.trim()}\n  `,
    );
  return `
-- A key's limits changed, from wasLimit and was (capacity) to limit and capacity: the state written
-- before \`before\`, brought forward by the old limits until \`ends\`, in the new terms (rebasePolicies()).
local function rebase(code, wasLimit, was, limit, capacity, st, o, ends, before)
  ${branches.join('')}end
end
`;
}

/**
 * `within`: each algorithm's `within` (for those that can owe) as one Lua function, made only in a call
 * that has a consume that may wait; an algorithm that cannot owe never fits a wait.
 */
function withinFunction(): string {
  const branches = [...ALGORITHM_LUA]
    .filter(([, lua]) => lua.within !== undefined)
    .map(
      ([{ code }, lua], i) =>
        `${i === 0 ? 'if' : 'elseif'} code == ${code} then\n      return ${lua.within?.trim()}\n    `,
    );
  return `
-- within: whether cost fits within maxWait ms of refill, charged into debt (a consume that may wait);
-- made only when some check may wait.
local within
if waiting then
  within = function(code, limit, window, capacity, st, o, cost, maxWait)
    ${branches.join('')}end
    return false
  end
end
`;
}

/** One of the algorithms' steps as one Lua function, branching on the algorithm's code. */
function operation(
  name: Exclude<keyof AlgorithmLua, 'within' | 'nowField' | 'expiryKept'>,
  params: string,
): string {
  const returns = name === 'fits' || name === 'idle' ? 'return ' : ''; // their bodies are expressions
  // \`wait\`'s bodies return themselves, and Lua allows no statement after a return: each branch's own.
  const branches = [...ALGORITHM_LUA].map(
    ([{ code }, lua], i) =>
      `${i === 0 ? 'if' : 'elseif'} code == ${code} then\n    ${returns}${lua[name].trim()}\n  `,
  );
  return `\nlocal function ${name}(code, limit, window, capacity, ${params})\n  ${branches.join('')}end\nend\n`;
}
