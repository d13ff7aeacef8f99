/**
 * The token-bucket script the Redis store runs: `settleBuckets` (token-bucket.ts) in Lua, plus the read
 * and write around it, so one EVALSHA reads, refills, decides and writes every bucket of a key.
 */

/**
 * KEYS[1]   the key's buckets: a string "<atMs>:<level 1>:...:<level n>", levels in units, one per
 *           policy in policy order. Missing: every bucket full.
 * ARGV[1]   now in ms, or '' to read the Redis server's own clock (one timeline for all app servers).
 * ARGV[2]   deadline in ms by that clock, or '' for none. A script that runs later than this (the client
 *           has given up on it and decided without the store) changes nothing and returns {-1, now}.
 * ARGV[3]   cost in tokens, > 0.
 * ARGV[4]   mode: 'consume', 'peek' or 'refund'.
 * ARGV[2+3i .. 4+3i]  policy i: limit (units refilled per ms), windowMs (units per token), capacityUnits.
 *
 * Returns { applied (1 or 0), now, level of policy 1, ..., of policy n }, levels as strings formatted with
 * %.17g: a Lua number returned as a number would be truncated to an integer reply.
 */
export const TOKEN_BUCKET_LUA = `
local now = tonumber(ARGV[1])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local deadline = tonumber(ARGV[2])
if deadline and now > deadline then return { -1, now } end
local cost = tonumber(ARGV[3])
local mode = ARGV[4]
local n = (#ARGV - 4) / 3
local limit, window, capacity, level = {}, {}, {}, {}

-- stored: the levels as written; at: when they were true; elapsed: refill since then, never negative,
-- and a clock that stepped back keeps the stored time, so no millisecond of refill counts twice.
local stored = redis.call('GET', KEYS[1])
local at, elapsed = now, 0
local fields = {}
if stored then
  for field in string.gmatch(stored, '[^:]+') do fields[#fields + 1] = tonumber(field) end
  at = math.max(now, fields[1])
  elapsed = math.max(0, now - fields[1])
end

local enough = true
for i = 1, n do
  limit[i] = tonumber(ARGV[2 + 3 * i])
  window[i] = tonumber(ARGV[3 + 3 * i])
  capacity[i] = tonumber(ARGV[4 + 3 * i])
  local was = stored and fields[i + 1] or capacity[i]
  level[i] = math.min(capacity[i], was + elapsed * limit[i])
  if level[i] < cost * window[i] then enough = false end
end

local result = { enough and 1 or 0, now }
if mode == 'peek' or (mode == 'consume' and not enough) then
  for i = 1, n do result[i + 2] = string.format('%.17g', level[i]) end
  return result
end

local sign = mode == 'consume' and -1 or 1
local untilFull = 0
local value = { string.format('%.17g', at) }
for i = 1, n do
  level[i] = math.min(capacity[i], level[i] + sign * cost * window[i])
  untilFull = math.max(untilFull, math.ceil((capacity[i] - level[i]) / limit[i]))
  result[i + 2] = string.format('%.17g', level[i])
  value[i + 1] = result[i + 2]
end
-- Full buckets carry no information. Otherwise the state matters until the slowest bucket is full.
if untilFull == 0 then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], table.concat(value, ':'), 'PX', string.format('%d', at - now + untilFull))
end
result[1] = 1
return result
`;
