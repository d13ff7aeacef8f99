-- A single check of two policies (token-bucket, then token-bucket): one consume, alone in its call, atomic across both.
-- KEYS[1]  the check's key, both policies' state in one string: f1:f2 (token-bucket), then g1:g2 (token-bucket)
-- ARGV     limit1, window1, capacity1 (token-bucket), then limit2, window2, capacity2 (token-bucket); then cost, deadline ('' none), now ('' or absent: the server's)
-- Path: read the state (-2: Redis refused the key), bring each policy to now; if the cost fits both,
-- apply it to each and write (or delete) the state. Answers { now, applied, every field }; -1: past its deadline.
-- Applied and written in whole numbers, it answers 'f1:f2:g1:g2' then ':now' or ':seconds:microseconds'.
local ceil, match, format = math.ceil, string.match, string.format
local argv, key = ARGV, KEYS[1]
local limit1, window1, capacity1 = argv[1] + 0, argv[2] + 0, argv[3] + 0
local limit2, window2, capacity2 = argv[4] + 0, argv[5] + 0, argv[6] + 0
local cost, deadline, now = argv[7] + 0, argv[8], argv[9]
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
local stored, f1, f2, g1, g2 = raw and true or false, false, false, false, false
if raw then
  -- One match reads every field: cheaper than a find and a sub for each. A state cut short fails.
  f1, f2, g1, g2 = match(raw, '^([^:]*):([^:]*):([^:]*):([^:]*)')
  f1, f2, g1, g2 = f1 + 0, f2 + 0, g1 + 0, g2 + 0
end
do
  if not stored then
    f1, f2 = capacity1, now
  else
    -- A clock that stepped back keeps the stored time, so no millisecond of refill is counted twice.
    local at = f2
    if at < now then f1, f2 = f1 + (now - at) * limit1, now end
    if f1 > capacity1 then f1 = capacity1 end
  end
end
do
  if not stored then
    g1, g2 = capacity2, now
  else
    -- A clock that stepped back keeps the stored time, so no millisecond of refill is counted twice.
    local at = g2
    if at < now then g1, g2 = g1 + (now - at) * limit2, now end
    if g1 > capacity2 then g1 = capacity2 end
  end
end
local applied = 0
if (f1 >= cost * window1)
  and (g1 >= cost * window2) then
  applied = 1
  local quiet, written = 0, nil
  do
    -- A debt stops where the time to repay it would no longer be a whole number of ms a store can count.
    f1 = f1 - cost * window1
    if f1 < capacity1 - 9007199254740991 then f1 = capacity1 - 9007199254740991 end
    local idle = f1 >= capacity1 and 0 or f2 - now + ceil((capacity1 - f1) / limit1)
    if idle > quiet then quiet = idle end
  end
  do
    -- A debt stops where the time to repay it would no longer be a whole number of ms a store can count.
    g1 = g1 - cost * window2
    if g1 < capacity2 - 9007199254740991 then g1 = capacity2 - 9007199254740991 end
    local idle = g1 >= capacity2 and 0 or g2 - now + ceil((capacity2 - g1) / limit2)
    if idle > quiet then quiet = idle end
  end
  if quiet > 0 then
    if (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992)
      and (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992)
      and (g1 % 1 == 0 and g1 > -9007199254740992 and g1 < 9007199254740992)
      and (g2 % 1 == 0 and g2 > -9007199254740992 and g2 < 9007199254740992) then
      local value = format('%d:%d:%d:%d', f1, f2, g1, g2)
      written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))
      if written.err then return { now, -2, written.err } end
      if usec then return value .. ':' .. clock .. ':' .. usec end
      return value .. ':' .. clock
    end
    written = redis.pcall('SET', key, (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and format('%d', f1) or format('%.17g', f1))
        .. ':' .. (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and format('%d', f2) or format('%.17g', f2))
        .. ':' .. (g1 % 1 == 0 and g1 > -9007199254740992 and g1 < 9007199254740992 and format('%d', g1) or format('%.17g', g1))
        .. ':' .. (g2 % 1 == 0 and g2 > -9007199254740992 and g2 < 9007199254740992 and format('%d', g2) or format('%.17g', g2)), 'PX', format('%d', quiet))
    if written.err then return { now, -2, written.err } end
  elseif raw then
    -- A number, or a refusal (a table).
    written = redis.pcall('DEL', key)
    if type(written) == 'table' then return { now, -2, written.err } end
  end
end
-- A Lua number in a reply is cut to an integer: any other is answered with all its digits.
if (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992)
  and (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992)
  and (g1 % 1 == 0 and g1 > -9007199254740992 and g1 < 9007199254740992)
  and (g2 % 1 == 0 and g2 > -9007199254740992 and g2 < 9007199254740992) then
  return { now, applied, f1, f2, g1, g2 }
end
return { now, applied,
  f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f1 or format('%.17g', f1),
  f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and f2 or format('%.17g', f2),
  g1 % 1 == 0 and g1 > -9007199254740992 and g1 < 9007199254740992 and g1 or format('%.17g', g1),
  g2 % 1 == 0 and g2 > -9007199254740992 and g2 < 9007199254740992 and g2 or format('%.17g', g2) }
