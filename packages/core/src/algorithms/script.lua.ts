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
 *           two. Missing: all fresh. (On a Cluster, one batch is one slot.)
 * ARGV      the policy sets, then the checks:
 *   S                          how many policy sets follow
 *   per set: n, then per policy: algorithm code, limit, windowMs, capacityUnits; then the ban: refusals in
 *            a row that start one (0: no ban), and how long it lasts in ms
 *   per check c, in KEYS order: set (1-based), now, deadline, cost, mode
 *     now       ms, or '' to read the Redis server's own clock (one timeline for all app servers)
 *     deadline  ms by that clock, or '' for none: a check that runs later (the client gave up on it and
 *               decided without the store) changes nothing and answers {-1, now}
 *     cost      tokens, > 0;  mode  'consume', 'peek', 'refund' or 'penalty'
 *
 * Returns one answer per check: { applied (1 or 0), now, then every policy's state fields, then when the
 * client's ban ends (0: not banned) }, as strings formatted with %.17g, since a Lua number returned as a number is truncated to an integer. A check whose
 * key Redis refuses (a key of another type, no memory to write) answers { -2, now, error } and changes
 * nothing: scripts do not roll back, so one bad key must not fail checks already applied.
 */
export const SCRIPT_LUA = `
local ALG = {}
${ALGORITHM_LUA.join('')}${BAN_LUA}
local function fmt(x) return string.format('%.17g', x) end

-- sets[s][i] = { alg, limit, window, capacity }; sets[s].ban = { after, duration } or nil
local sets, a = {}, 2
for s = 1, tonumber(ARGV[1]) do
  local n = tonumber(ARGV[a])
  local set = {}
  for i = 1, n do
    local b = a + 4 * i - 3
    set[i] = { alg = ALG[tonumber(ARGV[b])], limit = tonumber(ARGV[b + 1]),
               window = tonumber(ARGV[b + 2]), capacity = tonumber(ARGV[b + 3]) }
  end
  local after = tonumber(ARGV[a + 1 + 4 * n])
  if after > 0 then set.ban = { after = after, duration = tonumber(ARGV[a + 2 + 4 * n]) } end
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

-- The answer of a check: applied, now, every policy's state, when its ban ends.
local function answer(applied, now, states, bannedUntil)
  local out = { applied, now }
  for i = 1, #states do
    for k = 1, #states[i] do out[#out + 1] = fmt(states[i][k]) end
  end
  out[#out + 1] = fmt(bannedUntil)
  return out
end

-- Stores the states (and the ban's) until all say no more than fresh ones; deletes the key when they do.
local function write(key, set, states, ban, now)
  local idle = ban and BAN.idle(ban, now) or 0
  local value = {}
  for i = 1, #set do
    idle = math.max(idle, set[i].alg.idle(set[i], states[i], now))
    for k = 1, #states[i] do value[#value + 1] = fmt(states[i][k]) end
  end
  if ban then
    value[#value + 1] = fmt(ban[1])
    value[#value + 1] = fmt(ban[2])
  end
  if idle <= 0 then return redis.pcall('DEL', key) end
  return redis.pcall('SET', key, table.concat(value, ':'), 'PX', string.format('%d', idle))
end

local function settle(key, set, now, cost, mode)
  local stored = redis.pcall('GET', key)
  if type(stored) == 'table' then return { -2, now, stored.err } end
  local fields = {}
  if stored then
    for field in string.gmatch(stored, '[^:]+') do fields[#fields + 1] = tonumber(field) end
  end
  -- states[i]: policy i's state brought to now; fits: whether cost fits in every one.
  local states, fits, f = {}, true, 1
  for i = 1, #set do
    local p = set[i]
    local st
    if stored then
      st = {}
      for k = 1, p.alg.fields do st[k] = fields[f + k - 1] end
    end
    f = f + p.alg.fields
    states[i] = p.alg.current(p, st, now)
    if not p.alg.fits(p, states[i], cost, now) then fits = false end
  end
  local ban
  if set.ban then ban = BAN.current(stored and { fields[f], fields[f + 1] } or nil, now) end
  local check = mode == 'consume' or mode == 'peek'
  if ban and check and BAN.banned(ban, now) then return answer(0, now, states, ban[2]) end
  if mode == 'peek' or (mode == 'consume' and not fits and not ban) then
    return answer(fits and 1 or 0, now, states, 0)
  end

  local applied = 1
  if mode == 'consume' and not fits then
    -- A refusal changes nothing but the ban's count; the policies are written as they stand now.
    applied = 0
    ban = BAN.refused(set.ban, ban, now)
  else
    local sign = mode == 'refund' and 1 or -1
    for i = 1, #set do states[i] = set[i].alg.apply(set[i], states[i], cost, sign) end
    if ban and mode == 'consume' then ban = { 0, 0 } end
  end
  local written = write(key, set, states, ban, now)
  if type(written) == 'table' and written.err then return { -2, now, written.err } end
  return answer(applied, now, states, ban and ban[2] or 0)
end

local answers = {}
for c = 1, #KEYS do
  local set = sets[tonumber(ARGV[a])]
  local now = tonumber(ARGV[a + 1]) or clock()
  local deadline = tonumber(ARGV[a + 2])
  if deadline and now > deadline then
    answers[c] = { -1, now }
  else
    answers[c] = settle(KEYS[c], set, now, tonumber(ARGV[a + 3]), ARGV[a + 4])
  end
  a = a + 5
end
return answers
`;
