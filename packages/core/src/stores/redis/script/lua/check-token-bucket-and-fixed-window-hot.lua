-- A batch of single checks (token-bucket, then fixed-window) on one key: consumes of two policies, all alike.
-- KEYS[1]  the key
-- ARGV     how many checks, then limit1, window1, capacity1 (token-bucket), then limit2, window2 (fixed-window); then cost, deadline ('' none), now ('' or absent: the server's)
-- Path: past the deadline, -1 for every check; else read the state once, and per check, as the
-- single-check script: bring it to now, and if the cost fits, apply it; then write (or delete) it once.
-- Answers { now, then per check: applied (1 or 0) and the fields, or -2 and Redis's error }.
local ceil, match, format = math.ceil, string.match, string.format
local argv, key = ARGV, KEYS[1]
local count = argv[1] + 0
local limit1, window1, capacity1, limit2, window2 = argv[2] + 0, argv[3] + 0, argv[4] + 0, argv[5] + 0, argv[6] + 0
local cost, deadline, now = argv[7] + 0, argv[8], argv[9]
if now then
  now = now + 0
else
  local time = redis.call('TIME')
  local us = time[2] + 0
  now = time[1] * 1000 + (us - us % 1000) / 1000
end
local answers, n = { now }, 1
if deadline ~= '' and now > deadline + 0 then
  for c = 1, count do answers[c + 1] = -1 end
  return answers
end
local raw = redis.pcall('GET', key)
if raw and raw.err then -- a refusal (a string's err is nil)
  for c = 1, count do answers[2 * c], answers[2 * c + 1] = -2, raw.err end
  return answers
end
local stored, f1, f2, g1, g2 = raw and true or false, false, false, false, false
if raw then
  -- One match reads every field: cheaper than a find and a sub for each. A state cut short fails.
  f1, f2, g1, g2 = match(raw, '^([^:]*):([^:]*):([^:]*):([^:]*)')
  f1, f2, g1, g2 = f1 + 0, f2 + 0, g1 + 0, g2 + 0
end
-- quiet: the expiry of the state as the last check applied left it (none: deleted); dirty: whether one
-- applied.
local quiet, dirty = 0, false
for _ = 1, count do
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
    -- A window that has ended, none yet, or one with nothing counted: a new one starts now. A clock that
    -- stepped back keeps the window it is in.
    if not stored or g2 <= 0 or now >= g1 + window2 then g1, g2 = now, 0 end
  end
  local applied = 0
  if (f1 >= cost * window1)
    and (g2 + cost <= limit2) then
    applied = 1
    quiet = 0
    do
      -- A debt stops where the time to repay it would no longer be a whole number of ms a store can count.
      f1 = f1 - cost * window1
      if f1 < capacity1 - 9007199254740991 then f1 = capacity1 - 9007199254740991 end
      local idle = f1 >= capacity1 and 0 or f2 - now + ceil((capacity1 - f1) / limit1)
      if idle > quiet then quiet = idle end
    end
    do
      g2 = g2 + cost
      local idle = g2 > 0 and g1 + window2 - now or 0
      if idle > quiet then quiet = idle end
    end
    stored, dirty = quiet > 0, true
  end
  -- A Lua number in a reply is cut to an integer: any other is answered with all its digits.
  if (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992)
    and (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992)
    and (g1 % 1 == 0 and g1 > -9007199254740992 and g1 < 9007199254740992)
    and (g2 % 1 == 0 and g2 > -9007199254740992 and g2 < 9007199254740992) then
    answers[n + 1], answers[n + 2], answers[n + 3], answers[n + 4], answers[n + 5] = applied, f1, f2, g1, g2
  else
    answers[n + 1], answers[n + 2], answers[n + 3], answers[n + 4], answers[n + 5] = applied, f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f1 or format('%.17g', f1), f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and f2 or format('%.17g', f2), g1 % 1 == 0 and g1 > -9007199254740992 and g1 < 9007199254740992 and g1 or format('%.17g', g1), g2 % 1 == 0 and g2 > -9007199254740992 and g2 < 9007199254740992 and g2 or format('%.17g', g2)
  end
  n = n + 5
end
if dirty then
  local written
  if stored then
    local value
    value = ((f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992)
        and (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992)
        and (g1 % 1 == 0 and g1 > -9007199254740992 and g1 < 9007199254740992)
        and (g2 % 1 == 0 and g2 > -9007199254740992 and g2 < 9007199254740992))
      and format('%d:%d:%d:%d', f1, f2, g1, g2)
      or (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and format('%d', f1) or format('%.17g', f1)) .. ':' .. (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and format('%d', f2) or format('%.17g', f2)) .. ':' .. (g1 % 1 == 0 and g1 > -9007199254740992 and g1 < 9007199254740992 and format('%d', g1) or format('%.17g', g1)) .. ':' .. (g2 % 1 == 0 and g2 > -9007199254740992 and g2 < 9007199254740992 and format('%d', g2) or format('%.17g', g2))
    written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))
  elseif raw then
    written = redis.pcall('DEL', key)
  end
  if type(written) == 'table' and written.err then
    -- Nothing was written: every check answers Redis's refusal.
    answers = { now }
    for c = 1, count do answers[2 * c], answers[2 * c + 1] = -2, written.err end
  end
end
return answers
