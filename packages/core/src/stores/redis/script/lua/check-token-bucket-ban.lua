-- A single check (token-bucket) with a ban: one consume of one policy, alone in its call.
-- KEYS[1]  the check's key: f1:f2 (the policy), then refusals in a row and when the ban ends
-- ARGV     limit, capacityUnits, after, durationMs (the ban), then cost * windowMs, deadline ('' none), now ('' or absent: the server's)
-- Path: read the state (-2: Redis refused the key), bring it to now; banned, refuse and change nothing;
-- else if the cost fits, apply it and start the refusals again, if not count one more (a ban at after),
-- and write (or delete) the state. Answers { now, applied, the policy's fields, when the ban ends (0: none) }.
local floor, ceil, find, sub, format = math.floor, math.ceil, string.find, string.sub, string.format
local argv, key = ARGV, KEYS[1]
local limit, capacity, after, duration = argv[1] + 0, argv[2] + 0, argv[3] + 0, argv[4] + 0
local units, deadline, now = argv[5] + 0, argv[6], argv[7]
if now then
  now = now + 0
else
  local time = redis.call('TIME')
  now = time[1] * 1000 + floor(time[2] / 1000)
end
if deadline ~= '' and now > deadline + 0 then return { now, -1 } end

local raw = redis.pcall('GET', key)
if raw and raw.err then return { now, -2, raw.err } end -- a refusal (a string's err is nil)
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
  return { now, 0, f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f1 or format('%.17g', f1), f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and f2 or format('%.17g', f2), bannedUntil % 1 == 0 and bannedUntil > -9007199254740992 and bannedUntil < 9007199254740992 and bannedUntil or format('%.17g', bannedUntil) }
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
  written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))
  if written.err then
    return { now, -2, written.err }
  end
elseif raw then
  -- A number, or a refusal (a table).
  written = redis.pcall('DEL', key)
  if type(written) == 'table' then
    return { now, -2, written.err }
  end
end
-- A Lua number in a reply is cut to an integer: any other is answered with all its digits.
return { now, applied, f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f1 or format('%.17g', f1), f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and f2 or format('%.17g', f2), bannedUntil % 1 == 0 and bannedUntil > -9007199254740992 and bannedUntil < 9007199254740992 and bannedUntil or format('%.17g', bannedUntil) }
