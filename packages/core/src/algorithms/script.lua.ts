/**
 * The one script the Redis store runs: `settlePolicies` (settle.ts) in Lua, around the algorithms' own
 * Lua (each in its folder). One EVALSHA decides a batch of checks, one after another; a script runs
 * atomically, so each check is atomic across all of its key's policies, whatever their algorithms.
 */
import { BAN_LUA } from './ban/ban.lua.js';
import { ALGORITHM_LUA } from './registry.js';

/**
 * KEYS[c]   the states of check c's policies: a string of numbers joined by ':', each policy's fields in
 *           policy order (how many, and what they mean, is its algorithm's), then, with a ban, the ban's
 *           two. Missing: all fresh. (On a Cluster, one batch is one slot.) A key may come more than once:
 *           its checks are decided in order, each seeing the one before, and it is read and written once.
 * ARGV      the policy sets, then the checks:
 *   S                          how many policy sets follow
 *   per set: n, then per policy: algorithm code, limit, windowMs, capacityUnits; then the ban: refusals in
 *            a row that start one (0: no ban), and how long it lasts in ms
 *   per check c, in KEYS order: set (1-based), now, deadline, cost, mode
 *     now       ms, or '' to read the Redis server's own clock (one timeline for all app servers)
 *     deadline  ms by that clock, or '' for none: a check that runs later (the client gave up on it and
 *               decided without the store) changes nothing and answers -1, now
 *     cost      tokens, > 0;  mode  'consume', 'peek', 'refund' or 'penalty'
 *
 * Returns the checks' answers one after another in one flat array (a table per check would cost Redis
 * about a tenth of the check): applied (1 or 0), now, then every policy's state fields, then when the
 * client's ban ends (0: not banned); whole numbers as numbers, others as strings formatted with %.17g
 * (a Lua number in a reply is truncated to an integer). A check whose key Redis refuses (a key of another
 * type, no memory to write) answers -2, now, error and changes nothing: scripts do not roll back, so one
 * bad key must not fail the checks of the others.
 */
export const SCRIPT_LUA = `
local ALG = {}
${ALGORITHM_LUA.join('')}${BAN_LUA}
-- A number as it is stored: a whole one below 1e14 as it is (Lua writes those exactly), any other with
-- all its digits.
local floor, format = math.floor, string.format
local function num(x)
  if x == floor(x) and x > -1e14 and x < 1e14 then return x end
  return format('%.17g', x)
end

-- A number as it is answered: a whole one that a double holds exactly (below 2^53) as it is, since a
-- reply carries it as an integer; any other (a Lua number in a reply is truncated) with all its digits.
local function reply(x)
  if x == floor(x) and x > -9007199254740992 and x < 9007199254740992 then return x end
  return format('%.17g', x)
end

-- sets[s][i] = { code, limit, window, capacity, algorithm }; sets[s].ban = { after, duration } or nil
local sets, a = {}, 2
for s = 1, tonumber(ARGV[1]) do
  local n = tonumber(ARGV[a])
  local set = {}
  for i = 1, n do
    local b = a + 4 * i - 3
    local code = tonumber(ARGV[b])
    set[i] = { code, tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3]), ALG[code] }
  end
  local after = tonumber(ARGV[a + 1 + 4 * n])
  if after > 0 then set.ban = { after, tonumber(ARGV[a + 2 + 4 * n]) } end
  sets[s] = set
  a = a + 3 + 4 * n
end

-- The server's clock, read once for the whole batch when some check asks for it.
local serverNow
local function clock()
  if not serverNow then
    local time = redis.call('TIME')
    serverNow = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  return serverNow
end

-- The answers so far (n of them), and where each check's begins.
local answers, n, starts = {}, 0, {}

-- The answer of a check: applied, now, the first \`last\` state fields (the policies'), when its ban ends.
local function answer(applied, now, st, last, bannedUntil)
  answers[n + 1], answers[n + 2] = applied, now
  for k = 1, last do answers[n + 2 + k] = reply(st[k]) end
  answers[n + last + 3] = reply(bannedUntil)
  n = n + last + 3
end

local function refused(now, err)
  answers[n + 1], answers[n + 2], answers[n + 3] = -2, now, err
  n = n + 3
end

-- The stored value, split into numbers: st[1..n]; returns n.
local function parse(stored, st)
  local from, n = 1, 0
  while true do
    local sep = string.find(stored, ':', from, true)
    n = n + 1
    if not sep then st[n] = tonumber(string.sub(stored, from)) return n end
    st[n] = tonumber(string.sub(stored, from, sep - 1))
    from = sep + 1
  end
end

-- Every key of the batch is read once and written once: between its checks, \`held\` keeps its value as
-- Redis would hold it, so the checks of a hot key cost one GET and one SET per batch, not per check.
-- held[key] = { raw = the string read (false: none), st = the fields written since (false: deleted),
--               n = how many, px = the expiry of the last write, err = why Redis refused the GET }
local held = {}
local function hold(key)
  local h = held[key]
  if h then return h end
  local stored = redis.pcall('GET', key)
  if type(stored) == 'table' then
    h = { err = stored.err }
  else
    h = { raw = stored, st = nil, n = 0, px = 0 }
  end
  held[key] = h
  return h
end

local function settle(key, set, now, cost, mode)
  local h = hold(key)
  if h.err then return refused(now, h.err) end
  -- st: every policy's state fields, then the ban's, brought to now in place; fits: whether cost fits.
  local st, fits, o, stored = {}, true, 1, h.st
  if stored then
    for k = 1, h.n do st[k] = stored[k] end
  elseif stored == nil then
    stored = h.raw
    if stored then parse(stored, st) end
  end
  for i = 1, #set do
    local p = set[i]
    p[5].current(p, st, o, stored, now)
    if fits and not p[5].fits(p, st, o, cost, now) then fits = false end
    o = o + p[5].fields
  end
  local last, ban = o - 1, set.ban
  if ban then BAN.current(st, o, stored, now) end
  local check = mode == 'consume' or mode == 'peek'
  if ban and check and BAN.banned(st, o, now) then return answer(0, now, st, last, st[o + 1]) end
  if mode == 'peek' or (mode == 'consume' and not fits and not ban) then
    return answer(fits and 1 or 0, now, st, last, 0)
  end

  local applied = 1
  if mode == 'consume' and not fits then
    -- A refusal changes nothing but the ban's count; the policies are written as they stand now.
    applied = 0
    BAN.refused(ban, st, o, now)
  else
    local sign, q = mode == 'refund' and 1 or -1, 1
    for i = 1, #set do
      set[i][5].apply(set[i], st, q, cost, sign)
      q = q + set[i][5].fields
    end
    if ban and mode == 'consume' then BAN.admitted(st, o) end
  end
  -- Kept until every state says no more than a fresh one; deleted when they already do.
  local idle, q = 0, 1
  for i = 1, #set do
    idle = math.max(idle, set[i][5].idle(set[i], st, q, now))
    q = q + set[i][5].fields
  end
  local bannedUntil, fields = 0, last
  if ban then
    idle = math.max(idle, BAN.idle(st, o, now))
    bannedUntil, fields = st[o + 1], o + 1
  end
  if idle <= 0 then h.st = false else h.st, h.n, h.px = st, fields, idle end
  return answer(applied, now, st, last, bannedUntil)
end

for c = 1, #KEYS do
  local set = sets[tonumber(ARGV[a])]
  local now = tonumber(ARGV[a + 1]) or clock()
  local deadline = tonumber(ARGV[a + 2])
  starts[c] = n + 1
  if deadline and now > deadline then
    answers[n + 1], answers[n + 2] = -1, now
    n = n + 2
  else
    settle(KEYS[c], set, now, tonumber(ARGV[a + 3]), ARGV[a + 4])
  end
  a = a + 5
end

-- The writes. A key Redis refuses to write (no memory) changed nothing, so every check that read it
-- answers that: what they saw of it never landed.
local failed = {}
for key, h in pairs(held) do
  local st, written = h.st, nil
  if st then
    for k = 1, h.n do st[k] = num(st[k]) end
    written = redis.pcall('SET', key, table.concat(st, ':', 1, h.n), 'PX', h.px)
  elseif st == false and h.raw then
    written = redis.pcall('DEL', key)
  end
  if type(written) == 'table' and written.err then failed[key] = written.err end
end
if next(failed) == nil then return answers end
local kept, last = answers, n
answers, n = {}, 0
for c = 1, #KEYS do
  local from, to = starts[c], (starts[c + 1] or last + 1) - 1
  if failed[KEYS[c]] and kept[from] >= 0 then
    refused(kept[from + 1], failed[KEYS[c]])
  else
    for k = from, to do
      n = n + 1
      answers[n] = kept[k]
    end
  end
end
return answers
`;
