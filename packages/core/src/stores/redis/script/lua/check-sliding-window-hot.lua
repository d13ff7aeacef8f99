-- A batch of single checks (sliding-window) on one key: consumes of one policy, all alike.
-- KEYS[1]  the key
-- ARGV     how many checks, then limit, windowMs, then cost, deadline ('' none), now ('' or absent: the server's)
-- Path: past the deadline, -1 for every check; else read the state once, and per check, as the
-- single-check script: bring it to now, and if the cost fits, apply it; then write (or delete) it once.
-- Answers { now, then per check: applied (1 or 0) and the fields, or -2 and Redis's error }.
local min, max, floor, find, sub, format = math.min, math.max, math.floor, string.find, string.sub, string.format
local argv, key = ARGV, KEYS[1]
local count = argv[1] + 0
local limit, window = argv[2] + 0, argv[3] + 0
local cost, deadline, now = argv[4] + 0, argv[5], argv[6]
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
-- quiet: the expiry of the state as the last check applied left it (none: deleted); dirty: whether one
-- applied.
local quiet, dirty = 0, false
for _ = 1, count do
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
    quiet = f3 > 0 and f1 + 2 * window - now
      or f2 > 0 and f1 + window - now
      or 0
    stored, dirty = quiet > 0, true
  end
  -- A Lua number in a reply is cut to an integer: any other is answered with all its digits.
  if (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992)
    and (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992)
    and (f3 % 1 == 0 and f3 > -9007199254740992 and f3 < 9007199254740992) then
    answers[n + 1], answers[n + 2], answers[n + 3], answers[n + 4] = applied, f1, f2, f3
  else
    answers[n + 1], answers[n + 2], answers[n + 3], answers[n + 4] = applied, f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f1 or format('%.17g', f1), f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and f2 or format('%.17g', f2), f3 % 1 == 0 and f3 > -9007199254740992 and f3 < 9007199254740992 and f3 or format('%.17g', f3)
  end
  n = n + 4
end
if dirty then
  local written
  if stored then
    local value
    value = ((f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992)
        and (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992)
        and (f3 % 1 == 0 and f3 > -9007199254740992 and f3 < 9007199254740992))
      and format('%d:%d:%d', f1, f2, f3)
      or (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and format('%d', f1) or format('%.17g', f1)) .. ':' .. (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and format('%d', f2) or format('%.17g', f2)) .. ':' .. (f3 % 1 == 0 and f3 > -9007199254740992 and f3 < 9007199254740992 and format('%d', f3) or format('%.17g', f3))
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
