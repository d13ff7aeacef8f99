-- A batch of single checks (token-bucket): a consume of one policy on each key, each key once, all alike but the key.
-- KEYS     the checks' keys
-- ARGV     limit, capacityUnits, then cost * windowMs, deadline ('' none), now ('' or absent: the server's)
-- Path: past the deadline, -1 for every check; else read every key's state (one MGET), and per key, as
-- the single-check script: bring the state to now, and if the cost fits, apply it and write (or delete)
-- the state.
-- Answers { now, then per check: applied (1 or 0) and the fields, or -2 and Redis's error }; a check
-- applied and written in whole numbers is answered by the text written instead ('f1:f2…'); last, when
-- Redis refused the MGET, its error.
local ceil, find, sub, format = math.ceil, string.find, string.sub, string.format
local argv, keys = ARGV, KEYS
local limit, capacity = argv[1] + 0, argv[2] + 0
local units, deadline, now = argv[3] + 0, argv[4], argv[5]
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
-- nowText: the last field as text where it holds now, formatted once for every check.
local nowText = format(':%d', now)
-- raws: every key's state, read by one MGET. unread: why Redis refused it, answered after the checks;
-- each key is then read alone.
local raws = redis.pcall('MGET', unpack(keys))
local unread = raws.err
if unread then raws = false end
for c = 1, #keys do
  local key = keys[c]
  -- err: why Redis refused to read or write the key, answered in place of the check's answer.
  local raw, err
  if raws then
    raw = raws[c]
  else
    raw = redis.pcall('GET', key)
    err = raw and raw.err
  end
  if not err then
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
    -- answered: whether the check is answered by the text written (Redis replies a string for a fraction
    -- of what it costs to reply the numbers).
    local applied, answered = 0, false
    if f1 >= units then
      applied = 1
      -- A debt stops where the time to repay it would no longer be a whole number of ms a store can count.
      f1 = f1 - units
      if f1 < capacity - 9007199254740991 then f1 = capacity - 9007199254740991 end
      local quiet, written = f1 >= capacity and 0 or f2 - now + ceil((capacity - f1) / limit), nil
      if quiet > 0 then
        if (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992)
          and (f2 == now or f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992) then
          local value = f2 == now and format('%d', f1) .. nowText
            or format('%d:%d', f1, f2)
          if raw then
            written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))
          else
            written = redis.pcall('SET', key, value, 'PX', format('%d', quiet), 'NX') or redis.pcall('GET', key)
          end
          err = written.err
          if not err then answers[n + 1], n, answered = value, n + 1, true end
        else
          local value = (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and format('%d', f1) or format('%.17g', f1)) .. ':' .. (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and format('%d', f2) or format('%.17g', f2))
          if raw then
            written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))
          else
            written = redis.pcall('SET', key, value, 'PX', format('%d', quiet), 'NX') or redis.pcall('GET', key)
          end
          err = written.err
        end
      elseif raw then
        written = redis.pcall('DEL', key)
        if type(written) == 'table' then err = written.err end
      end
    end
    if not (err or answered) then
      -- A Lua number in a reply is cut to an integer: any other is answered with all its digits.
      if (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992)
        and (f2 == now or f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992) then
        answers[n + 1], answers[n + 2], answers[n + 3] = applied, f1, f2
      else
        answers[n + 1], answers[n + 2], answers[n + 3] = applied, f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f1 or format('%.17g', f1), f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and f2 or format('%.17g', f2)
      end
      n = n + 3
    end
  end
  if err then
    answers[n + 1], answers[n + 2] = -2, err
    n = n + 2
  end
end
if unread then answers[n + 1] = unread end
return answers
