-- A single check (fixed-window, reading overrides): one consume of one policy, alone in its call.
-- KEYS[1]  the check's key; its override beside it, at KEYS[1]..':o'
-- ARGV     limit, windowMs, then cost, deadline ('' none), now ('' or absent: the server's)
-- Path: read the state (-2: Redis refused the key), the override in force or ended, bring it to now, and if the cost fits,
-- apply it and write (or delete) the state. Answers { now, applied, the fields, the override }; -1: past its deadline.
local tonumber, max, floor, find, sub, format = tonumber, math.max, math.floor, string.find, string.sub, string.format
local argv, key = ARGV, KEYS[1]
local limit, window = argv[1] + 0, argv[2] + 0
local cost, deadline, now = argv[3] + 0, argv[4], argv[5]
if now then
  now = now + 0
else
  local time = redis.call('TIME')
  now = time[1] * 1000 + floor(time[2] / 1000)
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
  if override ~= 0 then
    quiet = max(quiet, (ends > 0 and ends - now or 0) + (f2 > 0 and f1 + window - now or 0))
  end
  if quiet > 0 then
    local value
    if (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992)
      and (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992) then
      value = format('%d:%d', f1, f2)
    else
      value = (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and format('%d', f1) or format('%.17g', f1))
        .. ':' .. (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and format('%d', f2) or format('%.17g', f2))
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
  and (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992) then
  return { now, applied, f1, f2, override }
end
return { now, applied,
  f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f1 or format('%.17g', f1),
  f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and f2 or format('%.17g', f2),
  override }
