/**
 * The token-bucket script the Redis store runs: `settleBuckets` (token-bucket.ts) in Lua, plus the reads
 * and writes around it, so one EVALSHA reads, refills, decides and writes every bucket of a key.
 */

/**
 * KEYS[i]   the bucket of policy i, a string "<levelUnits>:<atMs>"; all keys share one hash tag.
 * ARGV[1]   now in ms, or '' to read the Redis server's own clock (one timeline for all app servers).
 * ARGV[2]   cost in tokens, > 0.
 * ARGV[3]   mode: 'consume', 'peek' or 'refund'.
 * ARGV[1+3i .. 3+3i]  policy i: limit (units refilled per ms), windowMs (units per token), capacityUnits.
 *
 * Returns { applied (1 or 0), now, levelUnits of policy 1, ..., of policy n }, levels as strings formatted
 * with %.17g: a Lua number returned as a number would be truncated to an integer reply.
 */
export const TOKEN_BUCKET_LUA = `
local now = tonumber(ARGV[1])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local cost = tonumber(ARGV[2])
local mode = ARGV[3]
local n = #KEYS
local limit, window, capacity, level, at = {}, {}, {}, {}, {}
local enough = true

for i = 1, n do
  limit[i] = tonumber(ARGV[1 + 3 * i])
  window[i] = tonumber(ARGV[2 + 3 * i])
  capacity[i] = tonumber(ARGV[3 + 3 * i])
  local stored = redis.call('GET', KEYS[i])
  if stored then
    local sep = string.find(stored, ':', 1, true)
    local storedLevel = tonumber(string.sub(stored, 1, sep - 1))
    local storedAt = tonumber(string.sub(stored, sep + 1))
    -- A clock that stepped back keeps the stored time, so no refill is counted twice.
    level[i] = math.min(capacity[i], storedLevel + math.max(0, now - storedAt) * limit[i])
    at[i] = math.max(now, storedAt)
  else
    level[i] = capacity[i]
    at[i] = now
  end
  if level[i] < cost * window[i] then enough = false end
end

local result = { enough and 1 or 0, now }
if mode == 'peek' or (mode == 'consume' and not enough) then
  for i = 1, n do result[i + 2] = string.format('%.17g', level[i]) end
  return result
end

local sign = mode == 'consume' and -1 or 1
for i = 1, n do
  level[i] = math.min(capacity[i], level[i] + sign * cost * window[i])
  if level[i] >= capacity[i] then
    redis.call('DEL', KEYS[i])
  else
    -- The bucket is full again after this long; past that, forgetting it changes nothing.
    local ttl = at[i] - now + math.ceil((capacity[i] - level[i]) / limit[i])
    redis.call('SET', KEYS[i], string.format('%.17g', level[i]) .. ':' .. string.format('%.17g', at[i]), 'PX', string.format('%d', ttl))
  end
  result[i + 2] = string.format('%.17g', level[i])
end
result[1] = 1
return result
`;
