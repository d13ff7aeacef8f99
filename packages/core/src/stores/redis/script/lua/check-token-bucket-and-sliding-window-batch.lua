-- A batch of single checks (token-bucket, then sliding-window): a consume of two policies on each key, each key once, all alike but the key.
-- KEYS     the checks' keys
-- ARGV     limit1, window1, capacity1 (token-bucket), then limit2, window2 (sliding-window); then cost, deadline ('' none), now ('' or absent: the server's)
-- Path: past the deadline, -1 for every check; else read every key's state (one MGET), and per key, as
-- the single-check script: bring the state to now, and if the cost fits, apply it and write (or delete)
-- the state.
-- Answers { now, then per check: applied (1 or 0) and the fields, or -2 and Redis's error }; a check
-- applied and written in whole numbers is answered by the text written instead ('f1:f2…'); last, when
-- Redis refused the MGET, its error.
local min, max, floor, ceil, match, format = math.min, math.max, math.floor, math.ceil, string.match, string.format
local argv, keys = ARGV, KEYS
local limit1, window1, capacity1, limit2, window2 = argv[1] + 0, argv[2] + 0, argv[3] + 0, argv[4] + 0, argv[5] + 0
local cost, deadline, now = argv[6] + 0, argv[7], argv[8]
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
    local stored, f1, f2, g1, g2, g3 = raw and true or false, false, false, false, false, false
    if raw then
      -- One match reads every field: cheaper than a find and a sub for each. A state cut short fails.
      f1, f2, g1, g2, g3 = match(raw, '^([^:]*):([^:]*):([^:]*):([^:]*):([^:]*)')
      f1, f2, g1, g2, g3 = f1 + 0, f2 + 0, g1 + 0, g2 + 0, g3 + 0
    end
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
    -- answered: whether the check is answered by the text written (Redis replies a string for a fraction
    -- of what it costs to reply the numbers).
    local applied, answered = 0, false
    if (f1 >= cost * window1)
      and (-- The previous window's count, weighted by what the sliding window still covers of it.
        g2 * (window2 - min(window2, max(0, now - g1))) + (g3 + cost) * window2 <= limit2 * window2) then
      applied = 1
      local quiet, written = 0, nil
      do
        -- A debt stops where the time to repay it would no longer be a whole number of ms a store can count.
        f1 = f1 - cost * window1
        if f1 < capacity1 - 9007199254740991 then f1 = capacity1 - 9007199254740991 end
        local idle = f1 >= capacity1 and 0 or f2 - now + ceil((capacity1 - f1) / limit1)
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
          and (g1 % 1 == 0 and g1 > -9007199254740992 and g1 < 9007199254740992)
          and (g2 % 1 == 0 and g2 > -9007199254740992 and g2 < 9007199254740992)
          and (g3 % 1 == 0 and g3 > -9007199254740992 and g3 < 9007199254740992) then
          local value = format('%d:%d:%d:%d:%d', f1, f2, g1, g2, g3)
          if raw then
            written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))
          else
            written = redis.pcall('SET', key, value, 'PX', format('%d', quiet), 'NX') or redis.pcall('GET', key)
          end
          err = written.err
          if not err then answers[n + 1], n, answered = value, n + 1, true end
        else
          local value = (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and format('%d', f1) or format('%.17g', f1)) .. ':' .. (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and format('%d', f2) or format('%.17g', f2)) .. ':' .. (g1 % 1 == 0 and g1 > -9007199254740992 and g1 < 9007199254740992 and format('%d', g1) or format('%.17g', g1)) .. ':' .. (g2 % 1 == 0 and g2 > -9007199254740992 and g2 < 9007199254740992 and format('%d', g2) or format('%.17g', g2)) .. ':' .. (g3 % 1 == 0 and g3 > -9007199254740992 and g3 < 9007199254740992 and format('%d', g3) or format('%.17g', g3))
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
        and (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992)
        and (g1 % 1 == 0 and g1 > -9007199254740992 and g1 < 9007199254740992)
        and (g2 % 1 == 0 and g2 > -9007199254740992 and g2 < 9007199254740992)
        and (g3 % 1 == 0 and g3 > -9007199254740992 and g3 < 9007199254740992) then
        answers[n + 1], answers[n + 2], answers[n + 3], answers[n + 4], answers[n + 5], answers[n + 6] = applied, f1, f2, g1, g2, g3
      else
        answers[n + 1], answers[n + 2], answers[n + 3], answers[n + 4], answers[n + 5], answers[n + 6] = applied, f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f1 or format('%.17g', f1), f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and f2 or format('%.17g', f2), g1 % 1 == 0 and g1 > -9007199254740992 and g1 < 9007199254740992 and g1 or format('%.17g', g1), g2 % 1 == 0 and g2 > -9007199254740992 and g2 < 9007199254740992 and g2 or format('%.17g', g2), g3 % 1 == 0 and g3 > -9007199254740992 and g3 < 9007199254740992 and g3 or format('%.17g', g3)
      end
      n = n + 6
    end
  end
  if err then
    answers[n + 1], answers[n + 2] = -2, err
    n = n + 2
  end
end
if unread then answers[n + 1] = unread end
return answers
