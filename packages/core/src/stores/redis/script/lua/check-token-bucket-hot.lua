-- A batch of single checks (token-bucket) on one key: consumes of one policy, all alike.
-- KEYS[1]  the key
-- ARGV     how many checks, then limit, capacityUnits, then cost * windowMs, deadline ('' none), now ('' or absent: the server's)
-- Path: past the deadline, -1 for every check; else read the state once, and per check, as the
-- single-check script: bring it to now, and if the cost fits, apply it; then write (or delete) it once.
-- Answers { now, then per check: applied (1 or 0) and the fields, or -2 and Redis's error }.
local ceil, find, sub, format = math.ceil, string.find, string.sub, string.format
local argv, key = ARGV, KEYS[1]
local count = argv[1] + 0
local limit, capacity = argv[2] + 0, argv[3] + 0
local units, deadline, now = argv[4] + 0, argv[5], argv[6]
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
-- quiet: the expiry of the state as the last check applied left it (none: deleted); dirty: whether one
-- applied.
local quiet, dirty = 0, false
for _ = 1, count do
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
    quiet = f1 >= capacity and 0 or f2 - now + ceil((capacity - f1) / limit)
    stored, dirty = quiet > 0, true
  end
  -- A Lua number in a reply is cut to an integer: any other is answered with all its digits.
  if (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992)
    and (f2 == now or f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992) then
    answers[n + 1], answers[n + 2], answers[n + 3] = applied, f1, f2
  else
    answers[n + 1], answers[n + 2], answers[n + 3] = applied, f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f1 or format('%.17g', f1), f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and f2 or format('%.17g', f2)
  end
  n = n + 3
end
if dirty then
  local written
  if stored then
    local value
    value = ((f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992)
        and (f2 == now or f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992))
      and format('%d:%d', f1, f2)
      or (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and format('%d', f1) or format('%.17g', f1)) .. ':' .. (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and format('%d', f2) or format('%.17g', f2))
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
