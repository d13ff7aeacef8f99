-- A batch of single checks (fixed-window): a consume of one policy on each key, each key once, all alike but the key.
-- KEYS     the checks' keys
-- ARGV     limit, windowMs, then cost, deadline ('' none), now ('' or absent: the server's)
-- Path: past the deadline, -1 for every check; else read every key's state (one MGET), and per key, as
-- the single-check script: bring the state to now, and if the cost fits, apply it and write (or delete)
-- the state.
-- Answers { now, then per check: applied (1 or 0) and the fields, or -2 and Redis's error }; a check
-- applied and written in whole numbers is answered by the text written instead ('f1:f2…'); last, when
-- Redis refused the MGET, its error.
local find, sub, format = string.find, string.sub, string.format
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
    -- kept: the state goes on to expire when the stored one does (a window that goes on).
    local kept = stored and (f2 > 0 and now < f1 + window)
    do
      -- A window that has ended, none yet, or one with nothing counted: a new one starts now. A clock that
      -- stepped back keeps the window it is in.
      if not stored or f2 <= 0 or now >= f1 + window then f1, f2 = now, 0 end
    end
    -- answered: whether the check is answered by the text written (Redis replies a string for a fraction
    -- of what it costs to reply the numbers).
    local applied, answered = 0, false
    if f2 + cost <= limit then
      applied = 1
      f2 = f2 + cost
      local quiet, written = f2 > 0 and f1 + window - now or 0, nil
      if quiet > 0 then
        if (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992)
          and (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992) then
          local value = format('%d:%d', f1, f2)
          if raw then
            if kept then
              written = redis.pcall('SET', key, value, 'KEEPTTL')
            else
              written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))
            end
          else
            written = redis.pcall('SET', key, value, 'PX', format('%d', quiet), 'NX') or redis.pcall('GET', key)
          end
          err = written.err
          if not err then answers[n + 1], n, answered = value, n + 1, true end
        else
          local value = (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and format('%d', f1) or format('%.17g', f1)) .. ':' .. (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and format('%d', f2) or format('%.17g', f2))
          if raw then
            if kept then
              written = redis.pcall('SET', key, value, 'KEEPTTL')
            else
              written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))
            end
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
        and (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992) then
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
