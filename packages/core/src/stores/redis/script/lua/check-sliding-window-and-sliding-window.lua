-- A single check of two policies (sliding-window, then sliding-window): one consume, alone in its call, atomic across both.
-- KEYS[1]  the check's key, both policies' state in one string: f1:f2:f3 (sliding-window), then g1:g2:g3 (sliding-window)
-- ARGV     limit1, window1 (sliding-window), then limit2, window2 (sliding-window); then cost, deadline ('' none), now ('' or absent: the server's)
-- Path: read the state (-2: Redis refused the key), bring each policy to now; if the cost fits both,
-- apply it to each and write (or delete) the state. Answers { now, applied, every field }; -1: past its deadline.
-- Applied and written in whole numbers, it answers 'f1:f2:f3:g1:g2:g3' then ':now' or ':seconds:microseconds'.
local min, max, floor, match, format = math.min, math.max, math.floor, string.match, string.format
local argv, key = ARGV, KEYS[1]
local limit1, window1 = argv[1] + 0, argv[2] + 0
local limit2, window2 = argv[3] + 0, argv[4] + 0
local cost, deadline, now = argv[5] + 0, argv[6], argv[7]
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
local stored, f1, f2, f3, g1, g2, g3 = raw and true or false, false, false, false, false, false, false
if raw then
  -- One match reads every field: cheaper than a find and a sub for each. A state cut short fails.
  f1, f2, f3, g1, g2, g3 = match(raw, '^([^:]*):([^:]*):([^:]*):([^:]*):([^:]*):([^:]*)')
  f1, f2, f3, g1, g2, g3 = f1 + 0, f2 + 0, f3 + 0, g1 + 0, g2 + 0, g3 + 0
end
-- kept: the state goes on to expire when the stored one does (a window that goes on).
local kept = stored and (f3 > 0 and now < f1 + window1) and (g3 > 0 and now < g1 + window2)
do
  local start = floor(now / window1) * window1
  if not stored then
    f1, f2, f3 = start, 0, 0
  elseif start > f1 then -- a clock that stepped back keeps the stored windows
    if start == f1 + window1 then
      f1, f2, f3 = start, f3, 0
    else
      f1, f2, f3 = start, 0, 0
    end
  end
end
do
  local start = floor(now / window2) * window2
  if not stored then
    g1, g2, g3 = start, 0, 0
  elseif start > g1 then -- a clock that stepped back keeps the stored windows
    if start == g1 + window2 then
      g1, g2, g3 = start, g3, 0
    else
      g1, g2, g3 = start, 0, 0
    end
  end
end
local applied = 0
if (-- The previous window's count, weighted by what the sliding window still covers of it.
    f2 * (window1 - min(window1, max(0, now - f1))) + (f3 + cost) * window1 <= limit1 * window1)
  and (-- The previous window's count, weighted by what the sliding window still covers of it.
    g2 * (window2 - min(window2, max(0, now - g1))) + (g3 + cost) * window2 <= limit2 * window2) then
  applied = 1
  local quiet, written = 0, nil
  do
    f3 = f3 + cost
    local idle = f3 > 0 and f1 + 2 * window1 - now
      or f2 > 0 and f1 + window1 - now
      or 0
    if idle > quiet then quiet = idle end
  end
  do
    g3 = g3 + cost
    local idle = g3 > 0 and g1 + 2 * window2 - now
      or g2 > 0 and g1 + window2 - now
      or 0
    if idle > quiet then quiet = idle end
  end
  if quiet > 0 then
    if (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992)
      and (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992)
      and (f3 % 1 == 0 and f3 > -9007199254740992 and f3 < 9007199254740992)
      and (g1 % 1 == 0 and g1 > -9007199254740992 and g1 < 9007199254740992)
      and (g2 % 1 == 0 and g2 > -9007199254740992 and g2 < 9007199254740992)
      and (g3 % 1 == 0 and g3 > -9007199254740992 and g3 < 9007199254740992) then
      local value = format('%d:%d:%d:%d:%d:%d', f1, f2, f3, g1, g2, g3)
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
      .. ':' .. (g1 % 1 == 0 and g1 > -9007199254740992 and g1 < 9007199254740992 and format('%d', g1) or format('%.17g', g1))
      .. ':' .. (g2 % 1 == 0 and g2 > -9007199254740992 and g2 < 9007199254740992 and format('%d', g2) or format('%.17g', g2))
      .. ':' .. (g3 % 1 == 0 and g3 > -9007199254740992 and g3 < 9007199254740992 and format('%d', g3) or format('%.17g', g3))
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
  and (f3 % 1 == 0 and f3 > -9007199254740992 and f3 < 9007199254740992)
  and (g1 % 1 == 0 and g1 > -9007199254740992 and g1 < 9007199254740992)
  and (g2 % 1 == 0 and g2 > -9007199254740992 and g2 < 9007199254740992)
  and (g3 % 1 == 0 and g3 > -9007199254740992 and g3 < 9007199254740992) then
  return { now, applied, f1, f2, f3, g1, g2, g3 }
end
return { now, applied,
  f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f1 or format('%.17g', f1),
  f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and f2 or format('%.17g', f2),
  f3 % 1 == 0 and f3 > -9007199254740992 and f3 < 9007199254740992 and f3 or format('%.17g', f3),
  g1 % 1 == 0 and g1 > -9007199254740992 and g1 < 9007199254740992 and g1 or format('%.17g', g1),
  g2 % 1 == 0 and g2 > -9007199254740992 and g2 < 9007199254740992 and g2 or format('%.17g', g2),
  g3 % 1 == 0 and g3 > -9007199254740992 and g3 < 9007199254740992 and g3 or format('%.17g', g3) }
