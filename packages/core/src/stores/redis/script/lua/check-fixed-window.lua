-- A single check (fixed-window): one consume of one policy, alone in its call.
-- KEYS[1]  the check's key
-- ARGV     limit, windowMs, then cost, deadline ('' none), now ('' or absent: the server's)
-- Path: read the state (-2: Redis refused the key), bring it to now, and if the cost fits,
-- apply it and write (or delete) the state. Answers { now, applied, the fields }; -1: past its deadline.
-- Applied and written in whole numbers, it answers 'f1:f2' then ':now' or ':seconds:microseconds'.
local find, sub, format = string.find, string.sub, string.format
local argv, key = ARGV, KEYS[1]
local limit, window = argv[1] + 0, argv[2] + 0
local cost, deadline, now = argv[3] + 0, argv[4], argv[5]
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
-- kept: the state goes on to expire when the stored one does (a window that goes on).
local kept = stored and (f2 > 0 and now < f1 + window)
do
  -- A window that has ended, none yet, or one with nothing counted: a new one starts now. A clock that
  -- stepped back keeps the window it is in.
  if not stored or f2 <= 0 or now >= f1 + window then f1, f2 = now, 0 end
end
local applied = 0
if f2 + cost <= limit then
  applied = 1
  f2 = f2 + cost
  local quiet, written = f2 > 0 and f1 + window - now or 0, nil
  if quiet < 0 then quiet = 0 end
  if quiet > 0 then
    if (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992)
      and (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992) then
      local value = format('%d:%d', f1, f2)
      if kept then
        written = redis.pcall('SET', key, value, 'KEEPTTL')
      else
        written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))
      end
      if written.err then return { now, -2, written.err } end
      if usec then return value .. ':' .. clock .. ':' .. usec end
      return value .. ':' .. clock
    end
    local value = (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and format('%d', f1) or format('%.17g', f1))
      .. ':' .. (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and format('%d', f2) or format('%.17g', f2))
    if kept then
      written = redis.pcall('SET', key, value, 'KEEPTTL')
    else
      written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))
    end
    if written.err then return { now, -2, written.err } end
  elseif raw then
    -- A number, or a refusal (a table).
    written = redis.pcall('DEL', key)
    if type(written) == 'table' then return { now, -2, written.err } end
  end
end
-- A Lua number in a reply is cut to an integer: any other is answered with all its digits.
if (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992)
  and (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992) then
  return { now, applied, f1, f2 }
end
return { now, applied,
  f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f1 or format('%.17g', f1),
  f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and f2 or format('%.17g', f2) }
