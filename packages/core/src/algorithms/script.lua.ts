/**
 * The one script the Redis store runs: `settlePolicies` (settle.ts) in Lua, around the algorithms' own
 * Lua (each in its folder). One EVALSHA decides a batch of checks, one after another; a script runs
 * atomically, so each check is atomic across all of its key's policies, whatever their algorithms.
 */
import { ALGORITHM_LUA } from './registry.js';

/**
 * KEYS[c]   the states of check c's policies: a string of numbers joined by ':', each policy's fields in
 *           policy order (how many, and what they mean, is its algorithm's). Missing: all fresh.
 *           (On a Cluster, one batch is one slot.)
 * ARGV      the policy sets, then the checks:
 *   S                          how many policy sets follow
 *   per set: n, then per policy: algorithm code, limit, windowMs, capacityUnits
 *   per check c, in KEYS order: set (1-based), now, deadline, cost, mode
 *     now       ms, or '' to read the Redis server's own clock (one timeline for all app servers)
 *     deadline  ms by that clock, or '' for none: a check that runs later (the client gave up on it and
 *               decided without the store) changes nothing and answers {-1, now}
 *     cost      tokens, > 0;  mode  'consume', 'peek', 'refund' or 'penalty'
 *
 * Returns one answer per check: { applied (1 or 0), now, then every policy's state fields }, as strings
 * formatted with %.17g, since a Lua number returned as a number is truncated to an integer. A check whose
 * key Redis refuses (a key of another type, no memory to write) answers { -2, now, error } and changes
 * nothing: scripts do not roll back, so one bad key must not fail checks already applied.
 */
export const SCRIPT_LUA = `
local ALG = {}
${ALGORITHM_LUA.join('')}
local function fmt(x) return string.format('%.17g', x) end

-- sets[s][i] = { alg, limit, window, capacity }
local sets, a = {}, 2
for s = 1, tonumber(ARGV[1]) do
  local n = tonumber(ARGV[a])
  local set = {}
  for i = 1, n do
    local b = a + 4 * i - 3
    set[i] = { alg = ALG[tonumber(ARGV[b])], limit = tonumber(ARGV[b + 1]),
               window = tonumber(ARGV[b + 2]), capacity = tonumber(ARGV[b + 3]) }
  end
  sets[s] = set
  a = a + 1 + 4 * n
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

  local answer = { fits and 1 or 0, now }
  if mode ~= 'peek' and (mode ~= 'consume' or fits) then
    local sign = mode == 'refund' and 1 or -1
    local idle = 0
    for i = 1, #set do
      local p = set[i]
      states[i] = p.alg.apply(p, states[i], cost, sign)
      idle = math.max(idle, p.alg.idle(p, states[i], now))
    end
    -- States that say no more than fresh ones carry no information; otherwise keep them until all do.
    local written
    if idle <= 0 then
      written = redis.pcall('DEL', key)
    else
      local value = {}
      for i = 1, #set do
        for k = 1, #states[i] do value[#value + 1] = fmt(states[i][k]) end
      end
      written = redis.pcall('SET', key, table.concat(value, ':'), 'PX', string.format('%d', idle))
    end
    if type(written) == 'table' and written.err then return { -2, now, written.err } end
    answer[1] = 1
  end
  for i = 1, #set do
    for k = 1, #states[i] do answer[#answer + 1] = fmt(states[i][k]) end
  end
  return answer
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
