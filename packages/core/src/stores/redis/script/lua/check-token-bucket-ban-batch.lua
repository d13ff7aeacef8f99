-- A batch of single checks (token-bucket) with a ban: a consume of one policy on each key, each key once, all alike but the key.
-- KEYS     the checks' keys: f1:f2 (the policy), then refusals in a row and when the ban ends
-- ARGV     limit, capacityUnits, after, durationMs (the ban), then cost * windowMs, deadline ('' none), now ('' or absent: the server's)
-- Path: past the deadline, -1 for every check; else read every key's state (one MGET), and per key, as
-- the single-check script: bring the state to now; banned, refuse and change nothing; else apply the
-- cost or count a refusal, and write (or delete) the state.
-- Answers { now, then per check: applied (1 or 0), the policy's fields and when the ban ends, or -2 and
-- Redis's error }; last, when Redis refused the MGET, its error.
local ceil, find, sub, format = math.ceil, string.find, string.sub, string.format
local argv, keys = ARGV, KEYS
local limit, capacity, after, duration = argv[1] + 0, argv[2] + 0, argv[3] + 0, argv[4] + 0
local units, deadline, now = argv[5] + 0, argv[6], argv[7]
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
  repeat
    local raw, err
    if raws then
      raw = raws[c]
    else
      raw = redis.pcall('GET', key)
      err = raw and raw.err
    end
    if err then
      answers[n + 1], answers[n + 2] = -2, err
      n = n + 2
      break
    end
    local stored, f1, f2, refusals, bannedUntil = raw and true or false, false, false, false, false
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
        refusals = sub(raw, from, sep and sep - 1) + 0
        if not sep then break end
        from = sep + 1
        sep = find(raw, ':', from, true)
        bannedUntil = sub(raw, from, sep and sep - 1) + 0
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
    -- A ban that has run out is over, and its count starts again.
    if not stored or (bannedUntil > 0 and bannedUntil <= now) then refusals, bannedUntil = 0, 0 end
    if bannedUntil > now then
      answers[n + 1], answers[n + 2], answers[n + 3], answers[n + 4] = 0, f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f1 or format('%.17g', f1), f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and f2 or format('%.17g', f2), bannedUntil % 1 == 0 and bannedUntil > -9007199254740992 and bannedUntil < 9007199254740992 and bannedUntil or format('%.17g', bannedUntil)
      n = n + 4
      break
    end
    local applied = 0
    if f1 >= units then
      applied = 1
      -- A debt stops where the time to repay it would no longer be a whole number of ms a store can count.
      f1 = f1 - units
      if f1 < capacity - 9007199254740991 then f1 = capacity - 9007199254740991 end
      refusals, bannedUntil = 0, 0
    elseif refusals + 1 >= after then
      refusals, bannedUntil = 0, now + duration
    else
      refusals = refusals + 1
    end
    -- Kept until the policy's state and the ban's say no more than fresh ones; deleted when they already do.
    local quiet, written = f1 >= capacity and 0 or f2 - now + ceil((capacity - f1) / limit), nil
    if bannedUntil - now > quiet then quiet = bannedUntil - now end
    if quiet > 0 then
      local value
      if (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992)
        and (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992)
        and (refusals % 1 == 0 and refusals > -9007199254740992 and refusals < 9007199254740992)
        and (bannedUntil % 1 == 0 and bannedUntil > -9007199254740992 and bannedUntil < 9007199254740992) then
        value = format('%d:%d:%d:%d', f1, f2, refusals, bannedUntil)
      else
        value = (f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and format('%d', f1) or format('%.17g', f1))
          .. ':' .. (f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and format('%d', f2) or format('%.17g', f2))
          .. ':' .. (refusals % 1 == 0 and refusals > -9007199254740992 and refusals < 9007199254740992 and format('%d', refusals) or format('%.17g', refusals))
          .. ':' .. (bannedUntil % 1 == 0 and bannedUntil > -9007199254740992 and bannedUntil < 9007199254740992 and format('%d', bannedUntil) or format('%.17g', bannedUntil))
      end
      if raw then
        written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))
      else
        written = redis.pcall('SET', key, value, 'PX', format('%d', quiet), 'NX') or redis.pcall('GET', key)
      end
      if written.err then
        answers[n + 1], answers[n + 2] = -2, written.err
        n = n + 2
        break
      end
    elseif raw then
      -- A number, or a refusal (a table).
      written = redis.pcall('DEL', key)
      if type(written) == 'table' then
        answers[n + 1], answers[n + 2] = -2, written.err
        n = n + 2
        break
      end
    end
    -- A Lua number in a reply is cut to an integer: any other is answered with all its digits.
    answers[n + 1], answers[n + 2], answers[n + 3], answers[n + 4] = applied, f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f1 or format('%.17g', f1), f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and f2 or format('%.17g', f2), bannedUntil % 1 == 0 and bannedUntil > -9007199254740992 and bannedUntil < 9007199254740992 and bannedUntil or format('%.17g', bannedUntil)
    n = n + 4
    break
  until true
end
if unread then answers[n + 1] = unread end
return answers
