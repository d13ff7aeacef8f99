-- A batch of single checks (sliding-window, reading overrides): a consume of one policy on each key, each key once, all alike but the key.
-- KEYS     the checks' keys; each key's override beside it, at <key>..':o'
-- ARGV     limit, windowMs, then cost, deadline ('' none), now ('' or absent: the server's)
-- Path: past the deadline, -1 for every check; else per key, as the single-check script: read the state
-- and the override in force or ended, bring the state to now, and if the cost fits, apply it and write
-- (or delete) the state.
-- Answers { now, then per check: applied (1 or 0), the fields and the override, or -2 and Redis's error }.
local tonumber, min, max, floor, find, sub, format = tonumber, math.min, math.max, math.floor, string.find, string.sub, string.format
local argv, keys = ARGV, KEYS
local limit, window = argv[1] + 0, argv[2] + 0
local cost, deadline, now = argv[3] + 0, argv[4], argv[5]
if now then
  now = now + 0
else
  local time = redis.call('TIME')
  local us = time[2] + 0
  now = time[1] * 1000 + (us - us % 1000) / 1000
end
local answers, n = { now }, 1
if deadline ~= '' and now > deadline + 0 then
  for c = 1, #keys do answers[c + 1] = -1 end
  return answers
end
-- One key's check, answered as the single-check script answers it ({ now, then the answer }). Its limits
-- are copies of the policy's, which an override in force changes for this key alone.
local function check(key)
  local limit, window = limit, window
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
  -- override: the override in force, as stored, answered last (0: none).
  local override, ends = 0, 0
  local record = redis.pcall('GET', key .. ':o')
  if record and not record.err then -- a string (a refusal is a table with an err)
    local first = find(record, ':', 1, true)
    local second = first and find(record, ':', first + 1, true)
    local expires = second and tonumber(sub(record, 1, first - 1))
    local ovLimit = second and tonumber(sub(record, first + 1, second - 1))
    local ovBurst = second and not find(record, ':', second + 1, true) and tonumber(sub(record, second + 1))
    if ovBurst and expires >= 0 and expires % 1 == 0 and ovLimit >= 1 and ovLimit % 1 == 0
      and ovBurst >= 1 and ovBurst % 1 == 0 then
      if expires == 0 or expires > now then
        override, ends, limit = record, expires, ovLimit
      end
    end
  end
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
    if override ~= 0 then
      quiet = max(quiet, (ends > 0 and ends - now or 0) + (f3 > 0 and f1 + 2 * window - now
            or f2 > 0 and f1 + window - now
            or 0))
    end
    if quiet > 0 then
      local value
      if (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992)
        and (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992)
        and (f3 % 1 == 0 and f3 > -9007199254740992 and f3 < 9007199254740992) then
        value = format('%d:%d:%d', f1, f2, f3)
      else
        value = (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and format('%d', f1) or format('%.17g', f1))
          .. ':' .. (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and format('%d', f2) or format('%.17g', f2))
          .. ':' .. (f3 % 1 == 0 and f3 > -9007199254740992 and f3 < 9007199254740992 and format('%d', f3) or format('%.17g', f3))
      end
      written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))
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
    return { now, applied, f1, f2, f3, override }
  end
  return { now, applied,
    f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f1 or format('%.17g', f1),
    f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and f2 or format('%.17g', f2),
    f3 % 1 == 0 and f3 > -9007199254740992 and f3 < 9007199254740992 and f3 or format('%.17g', f3),
    override }
end
for c = 1, #keys do
  local answer = check(keys[c])
  for k = 2, #answer do answers[n + k - 1] = answer[k] end
  n = n + #answer - 1
end
return answers
