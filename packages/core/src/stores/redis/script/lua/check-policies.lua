-- A single check of several policies: one consume, alone in its call, atomic across the policies.
-- KEYS[1]  the check's key, every policy's state in one string
-- ARGV     n, then per policy its code, limit, windowMs, and capacityUnits if it is a token-bucket; then cost, deadline, now
-- Path: read the state (-2: Redis refused the key), bring each policy to now; if the cost fits them all,
-- apply it to each and write (or delete) the state. Answers { now, applied, every field }; -1: past its deadline.
-- Applied and written in whole numbers, it answers every field, then ':now' or ':seconds:microseconds'.
local min, max, floor, ceil, find, sub, format = math.min, math.max, math.floor, math.ceil, string.find, string.sub, string.format
local argv, key = ARGV, KEYS[1]
-- n: the policies' numbers by argument, read once for both passes; fields: how many the state holds.
local count, n, p, fields = argv[1] + 0, {}, 2, 0
for _ = 1, count do
  local code = argv[p]
  if code == '1' then
    n[p + 1], n[p + 2], n[p + 3] = argv[p + 1] + 0, argv[p + 2] + 0, argv[p + 3] + 0
    p, fields = p + 4, fields + 2
  elseif code == '2' then
    n[p + 1], n[p + 2] = argv[p + 1] + 0, argv[p + 2] + 0
    p, fields = p + 3, fields + 2
  elseif code == '3' then
    n[p + 1], n[p + 2] = argv[p + 1] + 0, argv[p + 2] + 0
    p, fields = p + 3, fields + 3
  else
    return redis.error_reply('unknown algorithm code ' .. tostring(code))
  end
end
local cost, deadline, now = argv[p] + 0, argv[p + 1], argv[p + 2]
-- clock, usec: now as text, for an answer given as text (the server's seconds and microseconds).
local clock, usec = now, nil
if now then
  now = now + 0
else
  local time = redis.call('TIME')
  clock, usec = time[1], time[2]
  local us = usec + 0
  now = clock * 1000 + (us - us % 1000) / 1000
end
if deadline ~= '' and now > deadline + 0 then return { now, -1 } end

local raw = redis.pcall('GET', key)
if raw and raw.err then return { now, -2, raw.err } end -- a refusal (a string's err is nil)
-- st: every policy's fields, in policy order, brought to now; fitting: whether the cost fits them all.
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
  if code == '1' then
    local limit, window, capacity = n[p + 1], n[p + 2], n[p + 3]
    if not stored then
      st[o], st[o + 1] = capacity, now
    else
      -- A clock that stepped back keeps the stored time, so no millisecond of refill is counted twice.
      local at = st[o + 1]
      if at < now then st[o], st[o + 1] = st[o] + (now - at) * limit, now end
      if st[o] > capacity then st[o] = capacity end
    end
    if fitting and not (st[o] >= cost * window) then fitting = false end
    p, o = p + 4, o + 2
  elseif code == '2' then
    local limit, window = n[p + 1], n[p + 2]
    -- A window that has ended, none yet, or one with nothing counted: a new one starts now. A clock that
    -- stepped back keeps the window it is in.
    if not stored or st[o + 1] <= 0 or now >= st[o] + window then st[o], st[o + 1] = now, 0 end
    if fitting and not (st[o + 1] + cost <= limit) then fitting = false end
    p, o = p + 3, o + 2
  elseif code == '3' then
    local limit, window = n[p + 1], n[p + 2]
    local start = floor(now / window) * window
    if not stored then
      st[o], st[o + 1], st[o + 2] = start, 0, 0
    elseif start > st[o] then -- a clock that stepped back keeps the stored windows
      if start == st[o] + window then
        st[o], st[o + 1], st[o + 2] = start, st[o + 2], 0
      else
        st[o], st[o + 1], st[o + 2] = start, 0, 0
      end
    end
    if fitting and not (-- The previous window's count, weighted by what the sliding window still covers of it.
        st[o + 1] * (window - min(window, max(0, now - st[o]))) + (st[o + 2] + cost) * window <= limit * window) then fitting = false end
    p, o = p + 3, o + 3
  end
end
local applied = 0
if fitting then
  applied = 1
  local quiet = 0
  p, o = 2, 1
  for _ = 1, count do
    local code = argv[p]
    if code == '1' then
      local limit, window, capacity = n[p + 1], n[p + 2], n[p + 3]
      -- A debt stops where the time to repay it would no longer be a whole number of ms a store can count.
      st[o] = st[o] - cost * window
      if st[o] < capacity - 9007199254740991 then st[o] = capacity - 9007199254740991 end
      quiet = max(quiet, st[o] >= capacity and 0 or st[o + 1] - now + ceil((capacity - st[o]) / limit))
      p, o = p + 4, o + 2
    elseif code == '2' then
      local window = n[p + 2]
      st[o + 1] = st[o + 1] + cost
      quiet = max(quiet, st[o + 1] > 0 and st[o] + window - now or 0)
      p, o = p + 3, o + 2
    elseif code == '3' then
      local window = n[p + 2]
      st[o + 2] = st[o + 2] + cost
      quiet = max(quiet, st[o + 2] > 0 and st[o] + 2 * window - now
          or st[o + 1] > 0 and st[o] + window - now
          or 0)
      p, o = p + 3, o + 3
    end
  end
  local written
  if quiet > 0 then
    local whole = true
    for k = 1, fields do
      local x = st[k]
      if not (x % 1 == 0 and x > -9007199254740992 and x < 9007199254740992) then whole = false break end
    end
    local value
    if whole then -- one format call for all of them: '%d:%d:…'
      value = format(sub(string.rep('%d:', fields), 1, -2), unpack(st, 1, fields))
    else
      value = {}
      for k = 1, fields do
        local x = st[k]
        value[k] = (x % 1 == 0 and x > -9007199254740992 and x < 9007199254740992) and format('%d', x) or format('%.17g', x)
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
  answer[k + 2] = (x % 1 == 0 and x > -9007199254740992 and x < 9007199254740992) and x or format('%.17g', x)
end
return answer
