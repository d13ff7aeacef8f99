-- A single check (sliding-window): one consume of one policy, alone in its call.
-- KEYS[1]  the check's key
-- ARGV     limit, windowMs, then cost, deadline ('' none), now ('' or absent: the server's)
-- Path: read the state (-2: Redis refused the key), bring it to now, and if the cost fits,
-- apply it and write (or delete) the state. Answers { now, applied, the fields }; -1: past its deadline.
-- Applied and written in whole numbers, it answers 'f1:f2:f3' then ':now' or ':seconds:microseconds'.
local min, max, floor, find, sub, format = math.min, math.max, math.floor, string.find, string.sub, string.format
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
local stored, f1, f2, f3 = raw and true or false, false, false, false
if raw then
  local from, sep = 1
  repeat
    sep = find(raw, ':', from, true)
    f1 = sub(raw, from, sep and sep - 1) + 0
    if not sep then break end
    from = sep + 1
    sep = find(raw, ':', from, true)
    f2 = sub(raw, from, sep and sep - 1) + 0
    if not sep then break end
    from = sep + 1
    sep = find(raw, ':', from, true)
    f3 = sub(raw, from, sep and sep - 1) + 0
  until true
end
-- kept: the state goes on to expire when the stored one does (a window that goes on).
local kept = stored and (f3 > 0 and now < f1 + window)
do
  local start = floor(now / window) * window
  if not stored then
    f1, f2, f3 = start, 0, 0
  elseif start > f1 then -- a clock that stepped back keeps the stored windows
    if start == f1 + window then
      f1, f2, f3 = start, f3, 0
    else
      f1, f2, f3 = start, 0, 0
    end
  end
end
local applied = 0
if -- The previous window's count, weighted by what the sliding window still covers of it.
  f2 * (window - min(window, max(0, now - f1))) + (f3 + cost) * window <= limit * window then
  applied = 1
  f3 = f3 + cost
  local quiet, written = f3 > 0 and f1 + 2 * window - now
    or f2 > 0 and f1 + window - now
    or 0, nil
  if quiet < 0 then quiet = 0 end
  if quiet > 0 then
    if (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992)
      and (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992)
      and (f3 % 1 == 0 and f3 > -9007199254740992 and f3 < 9007199254740992) then
      local value = format('%d:%d:%d', f1, f2, f3)
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
      .. ':' .. (f3 % 1 == 0 and f3 > -9007199254740992 and f3 < 9007199254740992 and format('%d', f3) or format('%.17g', f3))
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
  and (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992)
  and (f3 % 1 == 0 and f3 > -9007199254740992 and f3 < 9007199254740992) then
  return { now, applied, f1, f2, f3 }
end
return { now, applied,
  f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f1 or format('%.17g', f1),
  f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and f2 or format('%.17g', f2),
  f3 % 1 == 0 and f3 > -9007199254740992 and f3 < 9007199254740992 and f3 or format('%.17g', f3) }
