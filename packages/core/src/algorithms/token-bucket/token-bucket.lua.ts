/**
 * The token-bucket script the Redis store runs: `settleBuckets` (token-bucket.ts) in Lua, plus the read
 * and write around it. One EVALSHA decides a batch of checks, one after another, each reading,
 * refilling, deciding and writing every bucket of its key; a script runs atomically, so each check is.
 */

/**
 * KEYS[c]   the buckets of check c: a string "<atMs>:<level 1>:...:<level n>", levels in units, one per
 *           policy in policy order. Missing: every bucket full. (On a Cluster, one batch is one slot.)
 * ARGV      the policy sets, then the checks:
 *   S                                   how many policy sets follow
 *   per set: n, then per policy: limit (units refilled per ms), windowMs (units per token), capacityUnits
 *   per check c, in KEYS order: set (1-based), now, deadline, cost, mode
 *     now       ms, or '' to read the Redis server's own clock (one timeline for all app servers)
 *     deadline  ms by that clock, or '' for none: a check that runs later (the client gave up on it and
 *               decided without the store) changes nothing and answers {-1, now}
 *     cost      tokens, > 0;  mode  'consume', 'peek' or 'refund'
 *
 * Returns one answer per check: { applied (1 or 0), now, level of policy 1, ..., of policy n }, levels as
 * strings formatted with %.17g, since a Lua number returned as a number is truncated to an integer. A check
 * whose key Redis refuses (a key of another type, no memory left to write) answers { -2, now, error } and
 * changes nothing: scripts do not roll back, so one bad key must not fail checks already applied.
 */
export const TOKEN_BUCKET_LUA = `
local function fmt(x) return string.format('%.17g', x) end

-- sets[s] = { n, limit = {}, window = {}, capacity = {} }
local sets, a = {}, 2
for s = 1, tonumber(ARGV[1]) do
  local n = tonumber(ARGV[a])
  local set = { n = n, limit = {}, window = {}, capacity = {} }
  for i = 1, n do
    set.limit[i] = tonumber(ARGV[a + 3 * i - 2])
    set.window[i] = tonumber(ARGV[a + 3 * i - 1])
    set.capacity[i] = tonumber(ARGV[a + 3 * i])
  end
  sets[s] = set
  a = a + 1 + 3 * n
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
  local n, limit, window, capacity = set.n, set.limit, set.window, set.capacity
  -- stored: the levels as written; at: when they were true; elapsed: refill since then, never negative,
  -- and a clock that stepped back keeps the stored time, so no millisecond of refill counts twice.
  local stored = redis.pcall('GET', key)
  if type(stored) == 'table' then return { -2, now, stored.err } end
  local at, elapsed, fields = now, 0, {}
  if stored then
    for field in string.gmatch(stored, '[^:]+') do fields[#fields + 1] = tonumber(field) end
    at = math.max(now, fields[1])
    elapsed = math.max(0, now - fields[1])
  end

  local level, enough = {}, true
  for i = 1, n do
    local was = stored and fields[i + 1] or capacity[i]
    level[i] = math.min(capacity[i], was + elapsed * limit[i])
    if level[i] < cost * window[i] then enough = false end
  end

  local answer = { enough and 1 or 0, now }
  if mode == 'peek' or (mode == 'consume' and not enough) then
    for i = 1, n do answer[i + 2] = fmt(level[i]) end
    return answer
  end

  local sign = mode == 'consume' and -1 or 1
  local untilFull = 0
  local value = { fmt(at) }
  for i = 1, n do
    level[i] = math.min(capacity[i], level[i] + sign * cost * window[i])
    untilFull = math.max(untilFull, math.ceil((capacity[i] - level[i]) / limit[i]))
    answer[i + 2] = fmt(level[i])
    value[i + 1] = answer[i + 2]
  end
  -- Full buckets carry no information. Otherwise the state matters until the slowest bucket is full.
  local written
  if untilFull == 0 then
    written = redis.pcall('DEL', key)
  else
    written = redis.pcall('SET', key, table.concat(value, ':'), 'PX', string.format('%d', at - now + untilFull))
  end
  if type(written) == 'table' and written.err then return { -2, now, written.err } end
  answer[1] = 1
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
