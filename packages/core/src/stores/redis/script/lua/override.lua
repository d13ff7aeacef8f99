-- The override script: writes ('set'), removes ('remove') or reads ('get') a key's override (wire.ts).
-- KEYS[1]  the override, <key>:o;  KEYS[2]  the key's buckets
-- ARGV     mode, now ('' the server's), limits ('limit:burst:…'), ttl ('' none), how long the buckets are
--          kept at least after a change, how long an ended override is kept, then the limiter's policies
-- Path: a change rebases the buckets' state from the old limits to the new, so what was used stays used.
-- Answers { now, the override in force as stored ('' none) } for 'get'; '' for the others.
local tonumber, min, max, find, sub, format = tonumber, math.min, math.max, string.find, string.sub, string.format
local mode, now = ARGV[1], ARGV[2]
if now == '' then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now = tonumber(now)
end

-- The numbers of a string joined by ':'.
local function numbers(raw)
  local v, from = {}, 1
  while true do
    local sep = find(raw, ':', from, true)
    v[#v + 1] = tonumber(sub(raw, from, sep and sep - 1))
    if not sep then return v end
    from = sep + 1
  end
end

-- The override stored, if it fits the policies: { expires, limits = { limit, capacity (units), … } }.
local n, own = tonumber(ARGV[7]), {}
for i = 1, 5 * n do own[i] = tonumber(ARGV[7 + i]) end
local raw = redis.call('GET', KEYS[1])
local record = false
if raw then
  local v = numbers(raw)
  if #v == 1 + 2 * n then
    record = { expires = v[1], limits = {} }
    for p = 1, n do record.limits[2 * p - 1], record.limits[2 * p] = v[2 * p], v[2 * p + 1] * own[5 * p - 1] end
  end
end
local ended = record and record.expires ~= 0 and record.expires <= now
if mode == 'get' then return { now, (record and not ended) and raw or '' } end

-- The key's buckets, in the terms of the limits in force now: the policies' own, once an ended override
-- is read in its terms; then in those of the override set, or of the policies again.
local num = function(x)
  if x % 1 == 0 and x > -9007199254740992 and x < 9007199254740992 then return format('%d', x) end
  return format('%.17g', x)
end

-- A key's limits changed, from wasLimit and was (capacity) to limit and capacity: the state written
-- before `before`, brought forward by the old limits until `ends`, in the new terms (rebasePolicies()).
local function rebase(code, wasLimit, was, limit, capacity, st, o, ends, before)
  if code == 1 then
    if st[o + 1] < before then
      local level = min(was, st[o] + max(0, ends - st[o + 1]) * wasLimit)
      -- What was used stays used: a level owed stays owed, one held is what the new burst leaves of it.
      if level >= 0 then level = min(capacity, max(0, level + capacity - was)) end
      st[o], st[o + 1] = level, max(st[o + 1], ends)
    end
  end
end

local function rebaseAll(st, from, to, ends, before)
  local o = 1
  for p = 1, n do
    rebase(own[5 * p - 4], from[2 * p - 1], from[2 * p], to[2 * p - 1], to[2 * p], st, o, ends, before)
    o = o + own[5 * p - 3]
  end
end
local limits = {}
for p = 1, n do limits[2 * p - 1], limits[2 * p] = own[5 * p - 2], own[5 * p] end
local new = limits
if mode == 'set' then
  new = {}
  local v = numbers(ARGV[3])
  for p = 1, n do new[2 * p - 1], new[2 * p] = v[2 * p - 1], v[2 * p] * own[5 * p - 1] end
end
local state = (record or mode == 'set') and redis.call('GET', KEYS[2])
if state then
  local st = numbers(state)
  if ended then rebaseAll(st, record.limits, limits, record.expires, record.expires) end
  rebaseAll(st, (record and not ended) and record.limits or limits, new, now, now + 1)
  for k = 1, #st do st[k] = num(st[k]) end
  redis.call('SET', KEYS[2], table.concat(st, ':'), 'KEEPTTL')
end

if mode == 'set' then
  local ttl = ARGV[4]
  if ttl == '' then
    redis.call('SET', KEYS[1], '0:' .. ARGV[3])
  else
    redis.call('SET', KEYS[1], format('%d', now + tonumber(ttl)) .. ':' .. ARGV[3], 'PX',
      tonumber(ttl) + tonumber(ARGV[6]))
  end
else
  redis.call('DEL', KEYS[1])
end
if mode == 'set' or record then
  local left, keep = redis.call('PTTL', KEYS[2]), tonumber(ARGV[5])
  if left >= 0 and left < keep then redis.call('PEXPIRE', KEYS[2], keep) end
end
return { now, '' }
