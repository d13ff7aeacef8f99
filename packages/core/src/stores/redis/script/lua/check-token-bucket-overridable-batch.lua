-- A batch of single checks (token-bucket, reading overrides): a consume of one policy on each key, each key once, all alike but the key.
-- KEYS     the checks' keys; each key's override beside it, at <key>..':o'
-- ARGV     limit, windowMs, capacityUnits, then cost, deadline ('' none), now ('' or absent: the server's)
-- Path: past the deadline, -1 for every check; else per key, as the single-check script: read the state
-- and the override in force or ended, bring the state to now, and if the cost fits, apply it and write
-- (or delete) the state.
-- Answers { now, then per check: applied (1 or 0), the fields and the override, or -2 and Redis's error }.
local tonumber, min, max, ceil, find, sub, format = tonumber, math.min, math.max, math.ceil, string.find, string.sub, string.format
local argv, keys = ARGV, KEYS
local limit, window, capacity = argv[1] + 0, argv[2] + 0, argv[3] + 0
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
  for c = 1, #keys do answers[c + 1] = -1 end
  return answers
end
-- One key's check, answered as the single-check script answers it ({ now, then the answer }). Its limits
-- are copies of the policy's, which an override in force changes for this key alone.
local function check(key)
  local limit, window, capacity = limit, window, capacity
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
  -- override: the override in force, as stored, answered last (0: none); ownLimit, ownCapacity: the policy's own.
  local override, ends, ownLimit, ownCapacity = 0, 0, limit, capacity
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
        override, ends, limit, capacity = record, expires, ovLimit, ovBurst * window
      elseif stored then
        -- Ended: what was written under it is read in its terms, then in the policy's own.
        local wasLimit, was, ends, before = ovLimit, ovBurst * window, expires, expires
        if f2 < before then
          local level = min(was, f1 + max(0, ends - f2) * wasLimit)
          -- What was used stays used: a level owed stays owed, one held is what the new burst leaves of it.
          if level >= 0 then level = min(capacity, max(0, level + capacity - was)) end
          f1, f2 = level, max(f2, ends)
        end
      end
    end
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
  if f1 >= cost * window then
    applied = 1
    -- A debt stops where the time to repay it would no longer be a whole number of ms a store can count.
    f1 = f1 - cost * window
    if f1 < capacity - 9007199254740991 then f1 = capacity - 9007199254740991 end
    local quiet, written = f1 >= capacity and 0 or f2 - now + ceil((capacity - f1) / limit), nil
    if quiet < 0 then quiet = 0 end
    if override ~= 0 then
      local wasLimit, was, before = limit, capacity, ends
      limit, capacity = ownLimit, ownCapacity
      quiet = max(quiet, (ends > 0 and ends - now or 0) + (f1 >= capacity and 0 or f2 - now + ceil((capacity - f1) / limit)))
      if ends > 0 then
        -- Read in its terms from the override's end, as the next check will read it: what was used of a
        -- larger burst stays used, and takes longer to refill than the level alone says.
        local f1, f2 = f1, f2
        if f2 < before then
          local level = min(was, f1 + max(0, ends - f2) * wasLimit)
          -- What was used stays used: a level owed stays owed, one held is what the new burst leaves of it.
          if level >= 0 then level = min(capacity, max(0, level + capacity - was)) end
          f1, f2 = level, max(f2, ends)
        end
        quiet = max(quiet, f1 >= capacity and 0 or f2 - now + ceil((capacity - f1) / limit))
      end
    end
    if quiet > 0 then
      local value
      if (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992)
        and (f2 == now or f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992) then
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
    and (f2 == now or f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992) then
    return { now, applied, f1, f2, override }
  end
  return { now, applied,
    f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f1 or format('%.17g', f1),
    f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and f2 or format('%.17g', f2),
    override }
end
for c = 1, #keys do
  local answer = check(keys[c])
  for k = 2, #answer do answers[n + k - 1] = answer[k] end
  n = n + #answer - 1
end
return answers
