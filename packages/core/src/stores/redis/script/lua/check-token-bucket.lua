-- A single check (token-bucket): one consume of one policy, alone in its call.
-- KEYS[1]  the check's key
-- ARGV     limit, capacityUnits, then cost * windowMs, deadline ('' none), now ('' or absent: the server's)
-- Path: read the state (-2: Redis refused the key), bring it to now, and if the cost fits,
-- apply it and write (or delete) the state. Answers { now, applied, the fields }; -1: past its deadline.
-- Applied and written in whole numbers, it answers 'f1:f2' then ':now' or ':seconds:microseconds', unless f2 is now.
local ceil, find, sub, format = math.ceil, string.find, string.sub, string.format
local argv, key = ARGV, KEYS[1]
local limit, capacity = argv[1] + 0, argv[2] + 0
local units, deadline, now = argv[3] + 0, argv[4], argv[5]
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
local stored, f1, f2 = raw and true or false, false, false
if raw then
  local from, sep = 1
  repeat
    sep = find(raw, ':', from, true)
    f1 = sub(raw, from, sep and sep - 1) + 0
    if not sep then break end
    from = sep + 1
    sep = find(raw, ':', from, true)
    f2 = sub(raw, from, sep and sep - 1) + 0
  until true
end
do
  if not stored then
    f1, f2 = capacity, now
  else
    -- A clock that stepped back keeps the stored time, so no millisecond of refill is counted twice.
    local at = f2
    if at < now then f1, f2 = f1 + (now - at) * limit, now end
    if f1 > capacity then f1 = capacity end
  end
end
local applied = 0
if f1 >= units then
  applied = 1
  -- A debt stops where the time to repay it would no longer be a whole number of ms a store can count.
  f1 = f1 - units
  if f1 < capacity - 9007199254740991 then f1 = capacity - 9007199254740991 end
  local quiet, written = f1 >= capacity and 0 or f2 - now + ceil((capacity - f1) / limit), nil
  if quiet < 0 then quiet = 0 end
  if quiet > 0 then
    if (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992)
      and (f2 == now or f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992) then
      local value = format('%d:%d', f1, f2)
      written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))
      if written.err then return { now, -2, written.err } end
      if f2 == now then return value end
      if usec then return value .. ':' .. clock .. ':' .. usec end
      return value .. ':' .. clock
    end
    written = redis.pcall('SET', key, (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and format('%d', f1) or format('%.17g', f1))
        .. ':' .. (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and format('%d', f2) or format('%.17g', f2)), 'PX', format('%d', quiet))
    if written.err then return { now, -2, written.err } end
  elseif raw then
    -- A number, or a refusal (a table).
    written = redis.pcall('DEL', key)
    if type(written) == 'table' then return { now, -2, written.err } end
  end
end
-- A Lua number in a reply is cut to an integer: any other is answered with all its digits.
if (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992)
  and (f2 == now or f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992) then
  return { now, applied, f1, f2 }
end
return { now, applied,
  f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f1 or format('%.17g', f1),
  f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and f2 or format('%.17g', f2) }
