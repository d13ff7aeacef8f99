-- The settle script: a batch of checks, each decided atomically, one after another (layout: wire.ts).
-- KEYS  a key per check;  ARGV  the policy sets, the shapes (now, deadline, cost, mode), a shape per check
-- Answers: each shape's now, then each check's status and state fields.
-- Paths a check takes:
--   settleAlone  one policy, no ban or penalty, its key once in the batch: read, decide, write at once
--   settleOne    the same on a key that comes more than once (held: read once, written at the end)
--   settle       the held path, heldPath(): several policies, a ban, a penalty, an override in force
-- Then the held keys are written, and a key Redis refused to write takes back its checks' answers.
local tonumber, min, max, floor, ceil = tonumber, math.min, math.max, math.floor, math.ceil
local find, sub = string.find, string.sub

-- A number as it is stored: a whole one that a double holds exactly (below 2^53) in plain digits, which
-- '%d' writes exactly and faster than Lua's own conversion ('%.14g', which would also round beyond 14
-- digits); any other with all its digits.
local format = string.format
local function num(x)
  if x % 1 == 0 and x > -9007199254740992 and x < 9007199254740992 then return format('%d', x) end
  return format('%.17g', x)
end

-- A number as it is answered: a whole one that a double holds exactly (below 2^53) as it is, since a
-- reply carries it as an integer; any other (a Lua number in a reply is truncated) with all its digits.
local function reply(x)
  if x % 1 == 0 and x > -9007199254740992 and x < 9007199254740992 then return x end
  return format('%.17g', x)
end

-- sets[s] = { code, fields, limit, window, capacity, (and so on for each policy) }, with .ban =
-- { after, duration } or nil, .backoff and .restart (exponentialBackoff, continueExceeding), .rule
-- (whether a refusal is written: any of the three), .overridable (whether its checks read their key's
-- override), .fields, how many numbers its stored state has, .one, whether it is one policy and none
-- of the four, and .lone, whether it is one policy and overrides only. banned, backedOff, penalized:
-- whether some set has a ban, a backoff, either penalty.
local argv, sets, a, banned, backedOff, penalized = ARGV, {}, 2, false, false, false
for s = 1, argv[1] + 0 do
  local last = a + 5 * argv[a]
  local after, penalties, set = argv[last + 1] + 0, argv[last + 3] + 0, nil
  if last == a + 5 and after == 0 and penalties == 0 then
    -- The commonest set, made at its full size: a table that grows costs Redis more than filling it.
    set = { argv[a + 1] + 0, argv[a + 2] + 0, argv[a + 3] + 0, argv[a + 4] + 0,
      argv[a + 5] + 0, fields = 0, one = true }
    set.fields = set[2]
  else
    local fields = 0
    set = { one = false }
    for i = a + 1, last do set[i - a] = argv[i] + 0 end
    for i = 2, last - a, 5 do fields = fields + set[i] end
    if after > 0 then
      set.ban = { after, argv[last + 2] + 0 }
      banned = true
      fields = fields + 2
    end
    set.backoff, set.restart, set.overridable = penalties % 2 == 1, penalties % 4 >= 2, penalties >= 4
    -- One policy and no ban or penalty, but reading overrides: a key with none takes the fast path.
    set.lone = last == a + 5 and after == 0 and penalties == 4
    set.rule = after > 0 or set.backoff or set.restart
    if set.backoff then fields = fields + 3 end
    backedOff, penalized = backedOff or set.backoff, penalized or set.backoff or set.restart
    set.fields = fields
  end
  sets[s] = set
  a = last + 4
end

-- The server's clock, read once for the whole batch when some check asks for it.
local serverNow
local function clock()
  if not serverNow then
    local time = redis.call('TIME')
    serverNow = time[1] * 1000 + floor(time[2] / 1000)
  end
  return serverNow
end

-- The answers so far (n of them), and where each check's begins.
local answers, n, starts = {}, 0, {}

local function refused(err)
  answers[n + 1], answers[n + 2] = -2, err
  n = n + 2
end

-- A key's override, read once per batch from the key beside its buckets' (`<key>:o`, the same hash
-- tag, so the same slot): 'expires:limit:burst:…' (expires 0: none; a limit and a burst per policy)
-- makes { expires, set = the set with those limits, raw }. false: none, or one that does not fit the set.
-- One that has ended is kept a while (see the override script): what was written under it is read in
-- its terms.
local overridden
local function overrideOf(key, set)
  overridden = overridden or {}
  local found = overridden[key]
  if found ~= nil then return found end
  found = false
  local raw = redis.pcall('GET', key .. ':o')
  if type(raw) == 'string' then
    local v, k, from, whole = {}, 0, 1, true
    while true do
      local sep = find(raw, ':', from, true)
      k = k + 1
      v[k] = tonumber(sub(raw, from, sep and sep - 1))
      if not v[k] or v[k] < (k == 1 and 0 or 1) or v[k] % 1 ~= 0 then whole = false end
      if not sep then break end
      from = sep + 1
    end
    if whole and k == 1 + 2 * #set / 5 then
      local copy = {}
      for name, x in pairs(set) do copy[name] = x end
      for p = 1, #set / 5 do
        local i = 5 * p - 4
        copy[i + 2], copy[i + 4] = v[2 * p], v[2 * p + 1] * set[i + 3]
      end
      found = { expires = v[1], set = copy, raw = raw }
    end
  end
  overridden[key] = found
  return found
end

-- Whether an override as overrideOf() reads it is in force at now.
local function inForce(ov, now)
  return ov and (ov.expires == 0 or ov.expires > now)
end

-- The numbers of a stored string, as many as the longest state has (false for those it lacks).
local function parsed(raw)
  local p1, p2, p3, from, sep = false, false, false, 1, nil
  repeat
    sep = find(raw, ':', from, true)
    p1 = sub(raw, from, sep and sep - 1) + 0
    if not sep then break end
    from = sep + 1
    sep = find(raw, ':', from, true)
    p2 = sub(raw, from, sep and sep - 1) + 0
    if not sep then break end
    from = sep + 1
    sep = find(raw, ':', from, true)
    p3 = sub(raw, from, sep and sep - 1) + 0
  until true
  return p1, p2, p3
end

local function settleAlone(key, set, now, cost, mode, since)
  local raw = redis.pcall('GET', key)
  if raw and raw.err then return refused(raw.err) end -- a refusal (a string's err is nil)
  local stored, p1, p2, p3 = raw and true or false, false, false, false
  if raw then p1, p2, p3 = parsed(raw) end
  local code, limit, window, capacity = set[1], set[3], set[4], set[5]
  local applied = 1
  if code == 1 then
    local f1, f2 = p1, p2
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
    local fitting = f1 >= cost * window
    if mode == 'peek' or (mode == 'consume' and not fitting) then
      applied = fitting and 1 or 0
    else
      if mode == 'refund' then
        -- What refilled since the charge would have come back anyway: only the rest is still held by it.
        local held = cost * window - max(0, now - since) * limit
        if held > 0 then f1 = min(capacity, f1 + held) end
      else
        -- A debt stops where the time to repay it would no longer be a whole number of ms a store can count.
        f1 = f1 - cost * window
        if f1 < capacity - 9007199254740991 then f1 = capacity - 9007199254740991 end
      end
      local quiet = max(0, f1 >= capacity and 0 or f2 - now + ceil((capacity - f1) / limit))
      local written
      if quiet > 0 then
        local value
        if f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 then
          value = format('%d:%d', f1, f2)
        else
          value = num(f1) .. ':' .. num(f2)
        end
        written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))
      elseif raw then
        written = redis.pcall('DEL', key)
      end
      if type(written) == 'table' and written.err then return refused(written.err) end
    end
    if f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 then
      answers[n + 2], answers[n + 3] = f1, f2
    else
      answers[n + 2], answers[n + 3] = reply(f1), reply(f2)
    end
  elseif code == 2 then
    local f1, f2 = p1, p2
    do
      -- A window that has ended, none yet, or one with nothing counted: a new one starts now. A clock that
      -- stepped back keeps the window it is in.
      if not stored or f2 <= 0 or now >= f1 + window then f1, f2 = now, 0 end
    end
    local fitting = f2 + cost <= limit
    if mode == 'peek' or (mode == 'consume' and not fitting) then
      applied = fitting and 1 or 0
    else
      if mode == 'refund' then
        -- A window that began after the charge never counted it.
        if f1 <= since then f2 = max(0, f2 - cost) end
      else
        f2 = f2 + cost
      end
      local quiet = max(0, f2 > 0 and f1 + window - now or 0)
      local written
      if quiet > 0 then
        local value
        if f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 then
          value = format('%d:%d', f1, f2)
        else
          value = num(f1) .. ':' .. num(f2)
        end
        written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))
      elseif raw then
        written = redis.pcall('DEL', key)
      end
      if type(written) == 'table' and written.err then return refused(written.err) end
    end
    if f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 then
      answers[n + 2], answers[n + 3] = f1, f2
    else
      answers[n + 2], answers[n + 3] = reply(f1), reply(f2)
    end
  elseif code == 3 then
    local f1, f2, f3 = p1, p2, p3
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
    local fitting = -- The previous window's count, weighted by what the sliding window still covers of it.
    f2 * (window - min(window, max(0, now - f1))) + (f3 + cost) * window <= limit * window
    if mode == 'peek' or (mode == 'consume' and not fitting) then
      applied = fitting and 1 or 0
    else
      if mode == 'refund' then
        -- The charge is taken back from the window that counted it: the current one, or the previous one
        -- (whose weight in the estimate is what is left of it); one older than that counts no more.
        local charged = floor(since / window) * window
        if charged >= f1 then
          f3 = max(0, f3 - cost)
        elseif charged == f1 - window then
          f2 = max(0, f2 - cost)
        end
      else
        f3 = f3 + cost
      end
      local quiet = max(0, f3 > 0 and f1 + 2 * window - now
          or f2 > 0 and f1 + window - now
          or 0)
      local written
      if quiet > 0 then
        local value
        if f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and f3 % 1 == 0 and f3 > -9007199254740992 and f3 < 9007199254740992 then
          value = format('%d:%d:%d', f1, f2, f3)
        else
          value = num(f1) .. ':' .. num(f2) .. ':' .. num(f3)
        end
        written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))
      elseif raw then
        written = redis.pcall('DEL', key)
      end
      if type(written) == 'table' and written.err then return refused(written.err) end
    end
    if f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and f3 % 1 == 0 and f3 > -9007199254740992 and f3 < 9007199254740992 then
      answers[n + 2], answers[n + 3], answers[n + 4] = f1, f2, f3
    else
      answers[n + 2], answers[n + 3], answers[n + 4] = reply(f1), reply(f2), reply(f3)
    end
  end
  answers[n + 1] = applied
  n = n + set.fields + 1
end

-- The held path: for a key that comes more than once in the batch, and for a set of more than one policy
-- or with a ban or a penalty. Its functions are made only when a check takes it (heldPath() returns its
-- settle), since Redis makes each function of the script anew on every call.
--
-- Every key of the batch is read once and written once. A key the held path takes is held: held[key]
-- keeps its state between its checks as Redis would hold it, the fields themselves (held[key][1..]), and
--   stored   whether they are a stored state (false: none, or deleted since)
--   raw      the string read (false: none);  dirty  whether a check wrote since
--   n, px    how many fields, and the expiry, of the last write
--   err      why Redis refused the GET (and nothing else)
-- The held keys are written at the end of the script.
local held
-- waiting: whether some shape is a consume that may wait (mode 'wait').
local waiting = false
local function heldPath()
  held = {}

  local function current(code, limit, window, capacity, st, o, stored, now)
    if code == 1 then
      if not stored then
        st[o], st[o + 1] = capacity, now
      else
        -- A clock that stepped back keeps the stored time, so no millisecond of refill is counted twice.
        local at = st[o + 1]
        if at < now then st[o], st[o + 1] = st[o] + (now - at) * limit, now end
        if st[o] > capacity then st[o] = capacity end
      end
    elseif code == 2 then
      -- A window that has ended, none yet, or one with nothing counted: a new one starts now. A clock that
      -- stepped back keeps the window it is in.
      if not stored or st[o + 1] <= 0 or now >= st[o] + window then st[o], st[o + 1] = now, 0 end
    elseif code == 3 then
      local start = floor(now / window) * window
      if not stored then
        st[o], st[o + 1], st[o + 2] = start, 0, 0
      elseif start > st[o] then -- a clock that stepped back keeps the stored windows
        if start == st[o] + window then
          st[o], st[o + 1], st[o + 2] = start, st[o + 2], 0
        else
          st[o], st[o + 1], st[o + 2] = start, 0, 0
        end
      end
    end
  end

  local function fits(code, limit, window, capacity, st, o, cost, now)
    if code == 1 then
      return st[o] >= cost * window
    elseif code == 2 then
      return st[o + 1] + cost <= limit
    elseif code == 3 then
      return -- The previous window's count, weighted by what the sliding window still covers of it.
      st[o + 1] * (window - min(window, max(0, now - st[o]))) + (st[o + 2] + cost) * window <= limit * window
    end
  end

  -- A key's limits changed, from wasLimit and was (capacity) to limit and capacity: the state written
  -- before `before`, brought forward by the old limits until `ends`, in the new terms (rebasePolicies()).
  local function rebase(code, wasLimit, was, limit, capacity, st, o, ends, before)
    if code == 1 then
      if st[o + 1] < before then
        local level = min(was, st[o] + max(0, ends - st[o + 1]) * wasLimit)
        -- What was used stays used: a level owed stays owed, one held is what the new burst leaves of it.
        if level >= 0 then level = min(capacity, max(0, level + capacity - was)) end
        st[o], st[o + 1] = level, max(st[o + 1], ends)
      end
    end
  end

  local function apply(code, limit, window, capacity, st, o, cost)
    if code == 1 then
      -- A debt stops where the time to repay it would no longer be a whole number of ms a store can count.
      st[o] = st[o] - cost * window
      if st[o] < capacity - 9007199254740991 then st[o] = capacity - 9007199254740991 end
    elseif code == 2 then
      st[o + 1] = st[o + 1] + cost
    elseif code == 3 then
      st[o + 2] = st[o + 2] + cost
    end
  end

  local function refund(code, limit, window, capacity, st, o, cost, since, now)
    if code == 1 then
      -- What refilled since the charge would have come back anyway: only the rest is still held by it.
      local held = cost * window - max(0, now - since) * limit
      if held > 0 then st[o] = min(capacity, st[o] + held) end
    elseif code == 2 then
      -- A window that began after the charge never counted it.
      if st[o] <= since then st[o + 1] = max(0, st[o + 1] - cost) end
    elseif code == 3 then
      -- The charge is taken back from the window that counted it: the current one, or the previous one
      -- (whose weight in the estimate is what is left of it); one older than that counts no more.
      local charged = floor(since / window) * window
      if charged >= st[o] then
        st[o + 2] = max(0, st[o + 2] - cost)
      elseif charged == st[o] - window then
        st[o + 1] = max(0, st[o + 1] - cost)
      end
    end
  end

  local function idle(code, limit, window, capacity, st, o, now)
    if code == 1 then
      return st[o] >= capacity and 0 or st[o + 1] - now + ceil((capacity - st[o]) / limit)
    elseif code == 2 then
      return st[o + 1] > 0 and st[o] + window - now or 0
    elseif code == 3 then
      return st[o + 2] > 0 and st[o] + 2 * window - now
        or st[o + 1] > 0 and st[o] + window - now
        or 0
    end
  end

  local function banSteps()
    return {
      current = function(st, o, stored, now)
        if not stored or (st[o + 1] > 0 and st[o + 1] <= now) then st[o], st[o + 1] = 0, 0 end
      end,
      banned = function(st, o, now) return st[o + 1] > now end,
      refused = function(rule, st, o, now)
        if st[o] + 1 >= rule[1] then st[o], st[o + 1] = 0, now + rule[2] else st[o] = st[o] + 1 end
      end,
      admitted = function(st, o) st[o], st[o + 1] = 0, 0 end,
      idle = function(st, o, now) return max(0, st[o + 1] - now) end,
    }
  end

  -- BAN: the ban's steps, when some set has a ban.
  local BAN = banned and banSteps()

  local function backoffSteps()
    return {
      current = function(st, b, stored)
        if not stored then st[b], st[b + 1], st[b + 2] = 0, 0, 0 end
      end,
      refused = function(st, b, now, wait)
        local refusals = st[b]
        local base = refusals == 0 and wait or st[b + 2]
        st[b] = min(refusals + 1, 10)
        st[b + 1] = max(st[b + 1], now + base * 2 ^ refusals)
        st[b + 2] = base
      end,
      admitted = function(st, b) st[b], st[b + 1], st[b + 2] = 0, 0, 0 end,
      idle = function(st, b, now) return max(0, st[b + 1] - now) end,
    }
  end

  -- BACKOFF: the backoff's steps, when some set has one.
  local BACKOFF = backedOff and backoffSteps()

  -- The algorithms' steps for penalties, restart (continueExceeding) and wait (exponentialBackoff), made
  -- only when some set has one.
  local function penaltySteps()

    local function restart(code, limit, window, capacity, st, o, cost, now)
      if code == 1 then
        -- The refused cost is charged as debt, down to one full bucket owed: a client that keeps knocking
        -- keeps owing, and one that stops is whole again within (capacity + cost) of refill.
        if cost * window <= capacity then st[o] = max(-capacity, st[o] - cost * window) end
      elseif code == 2 then
        -- The window starts again now, its count kept: the client waits a whole window from its last knock.
        if cost <= limit then st[o] = now end
      elseif code == 3 then
        -- The refused cost is counted in the current window as if admitted, up to limit: the estimate stays
        -- full while the client keeps knocking, and empties over the next window once it stops.
        if cost <= limit then st[o + 2] = min(limit, st[o + 2] + cost) end
      end
    end

    local function wait(code, limit, window, capacity, st, o, cost, now)
      if code == 1 then
        if cost * window > capacity then return -1 end
        return max(0, ceil((cost * window - st[o]) / limit))
      elseif code == 2 then
        if cost > limit then return -1 end
        return st[o + 1] + cost <= limit and 0 or max(0, st[o] + window - now)
      elseif code == 3 then
        -- waitUntil() in sliding-window.ts: ms until the estimate times the window is at most allowed.
        local allowed = (limit - cost) * window
        if allowed < 0 then return -1 end
        local start, previous, current = st[o], st[o + 1], st[o + 2]
        local from = max(now, start)
        if previous * (window - min(window, max(0, from - start))) + current * window <= allowed then
          return from - now
        end
        local finish = start + window
        if previous > 0 and allowed - current * window >= 0 then
          local at = ceil(finish - (allowed - current * window) / previous)
          if at < finish then return max(at, from) - now end
        end
        if current == 0 then return finish - now end
        return max(finish, ceil(finish + window - allowed / current)) - now
      end
    end

    return restart, wait
  end
  local restart, wait
  if penalized then restart, wait = penaltySteps() end

  -- within: whether cost fits within maxWait ms of refill, charged into debt (a consume that may wait);
  -- made only when some check may wait.
  local within
  if waiting then
    within = function(code, limit, window, capacity, st, o, cost, maxWait)
      if code == 1 then
        return cost * window <= capacity and cost * window - st[o] <= maxWait * limit
          and st[o] - cost * window >= capacity - 9007199254740991
      end
      return false
    end
  end

  -- The answer of a check: applied, the first `last` state fields (the policies'), when its ban ends (nil:
  -- its set has no ban), until when its backoff holds the client back (nil: its set has none), and the
  -- override it was decided by (0: none; nil: its set reads none).
  local function answer(applied, st, last, bannedUntil, backoffUntil, override)
    answers[n + 1] = applied
    for k = 1, last do answers[n + 1 + k] = reply(st[k]) end
    n = n + last + 1
    if bannedUntil then
      n = n + 1
      answers[n] = reply(bannedUntil)
    end
    if backoffUntil then
      n = n + 1
      answers[n] = reply(backoffUntil)
    end
    if override then
      n = n + 1
      answers[n] = override
    end
  end

  -- A refused consume under its set's rule, its ban's state at o and its backoff's at b: refusedBy() in
  -- settle.ts, step for step.
  local function refusedBy(set, st, o, b, cost, now)
    if set.ban then BAN.refused(set.ban, st, o, now) end
    if set.restart then
      local q = 1
      for i = 1, #set, 5 do
        local code, limit, window, capacity = set[i], set[i + 2], set[i + 3], set[i + 4]
        if not fits(code, limit, window, capacity, st, q, cost, now) then
          restart(code, limit, window, capacity, st, q, cost, now)
        end
        q = q + set[i + 1]
      end
    end
    if set.backoff then
      -- The policies' wait as the restarts left it; -1: the cost is more than some policy holds.
      local waited, q = 0, 1
      for i = 1, #set, 5 do
        local w = wait(set[i], set[i + 2], set[i + 3], set[i + 4], st, q, cost, now)
        if w < 0 or waited < 0 then waited = -1 else waited = max(waited, w) end
        q = q + set[i + 1]
      end
      if waited >= 0 then BACKOFF.refused(st, b, now, waited) end
    end
  end

  local function settleOne(h, set, now, cost, mode, since)
    local stored = h.stored
    local code, limit, window, capacity = set[1], set[3], set[4], set[5]
    local applied = 1
    if code == 1 then
      local f1, f2 = h[1], h[2]
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
      local fitting = f1 >= cost * window
      if mode == 'peek' or (mode == 'consume' and not fitting) then
        applied = fitting and 1 or 0
      else
        if mode == 'refund' then
          -- What refilled since the charge would have come back anyway: only the rest is still held by it.
          local held = cost * window - max(0, now - since) * limit
          if held > 0 then f1 = min(capacity, f1 + held) end
        else
          -- A debt stops where the time to repay it would no longer be a whole number of ms a store can count.
          f1 = f1 - cost * window
          if f1 < capacity - 9007199254740991 then f1 = capacity - 9007199254740991 end
        end
        local quiet = max(0, f1 >= capacity and 0 or f2 - now + ceil((capacity - f1) / limit))
        h.dirty, h.stored = true, quiet > 0
        if quiet > 0 then h[1], h[2], h.n, h.px = f1, f2, 2, quiet end
      end
      if f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 then
        answers[n + 2], answers[n + 3] = f1, f2
      else
        answers[n + 2], answers[n + 3] = reply(f1), reply(f2)
      end
    elseif code == 2 then
      local f1, f2 = h[1], h[2]
      do
        -- A window that has ended, none yet, or one with nothing counted: a new one starts now. A clock that
        -- stepped back keeps the window it is in.
        if not stored or f2 <= 0 or now >= f1 + window then f1, f2 = now, 0 end
      end
      local fitting = f2 + cost <= limit
      if mode == 'peek' or (mode == 'consume' and not fitting) then
        applied = fitting and 1 or 0
      else
        if mode == 'refund' then
          -- A window that began after the charge never counted it.
          if f1 <= since then f2 = max(0, f2 - cost) end
        else
          f2 = f2 + cost
        end
        local quiet = max(0, f2 > 0 and f1 + window - now or 0)
        h.dirty, h.stored = true, quiet > 0
        if quiet > 0 then h[1], h[2], h.n, h.px = f1, f2, 2, quiet end
      end
      if f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 then
        answers[n + 2], answers[n + 3] = f1, f2
      else
        answers[n + 2], answers[n + 3] = reply(f1), reply(f2)
      end
    elseif code == 3 then
      local f1, f2, f3 = h[1], h[2], h[3]
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
      local fitting = -- The previous window's count, weighted by what the sliding window still covers of it.
      f2 * (window - min(window, max(0, now - f1))) + (f3 + cost) * window <= limit * window
      if mode == 'peek' or (mode == 'consume' and not fitting) then
        applied = fitting and 1 or 0
      else
        if mode == 'refund' then
          -- The charge is taken back from the window that counted it: the current one, or the previous one
          -- (whose weight in the estimate is what is left of it); one older than that counts no more.
          local charged = floor(since / window) * window
          if charged >= f1 then
            f3 = max(0, f3 - cost)
          elseif charged == f1 - window then
            f2 = max(0, f2 - cost)
          end
        else
          f3 = f3 + cost
        end
        local quiet = max(0, f3 > 0 and f1 + 2 * window - now
            or f2 > 0 and f1 + window - now
            or 0)
        h.dirty, h.stored = true, quiet > 0
        if quiet > 0 then h[1], h[2], h[3], h.n, h.px = f1, f2, f3, 3, quiet end
      end
      if f1 % 1 == 0 and f1 > -9007199254740992 and f1 < 9007199254740992 and f2 % 1 == 0 and f2 > -9007199254740992 and f2 < 9007199254740992 and f3 % 1 == 0 and f3 > -9007199254740992 and f3 < 9007199254740992 then
        answers[n + 2], answers[n + 3], answers[n + 4] = f1, f2, f3
      else
        answers[n + 2], answers[n + 3], answers[n + 4] = reply(f1), reply(f2), reply(f3)
      end
    end
    answers[n + 1] = applied
    n = n + set.fields + 1
  end

  local function hold(key)
    local h = held[key]
    if h then return h end
    local raw = redis.pcall('GET', key)
    if type(raw) == 'table' then
      h = { err = raw.err }
    else
      -- Room for three fields from the start (growing a table costs); false, so a state cut short fails.
      h = { false, false, false, raw = raw, stored = raw and true or false, dirty = false, n = 0, px = 0 }
      if raw then
        local from, k = 1, 0
        while true do
          local sep = find(raw, ':', from, true)
          k = k + 1
          if not sep then h[k] = sub(raw, from) + 0 break end
          h[k] = sub(raw, from, sep - 1) + 0
          from = sep + 1
        end
      end
    end
    held[key] = h
    return h
  end

  -- A check works on a copy of its key's state, so one that writes nothing leaves it as it was; one copy
  -- serves every check of the batch.
  local st = {}
  local function settle(key, set, now, cost, mode, since)
    local h = hold(key)
    if h.err then return refused(h.err) end
    if set.one and mode ~= 'wait' then return settleOne(h, set, now, cost, mode, since) end
    -- own: the set as the limiter sent it; set: as the key's override in force (ov) makes it; ended: the
    -- key's override that has ended, kept so that what was written under it is read in its terms.
    local own, ov, ended = set, false, false
    if set.overridable then
      ov = overrideOf(key, set)
      if inForce(ov, now) then set = ov.set else ended, ov = ov, false end
    end
    local override = own.overridable and (ov and ov.raw or 0)
    -- A consume that may wait (its since is the most ms it waits) fits when every policy can cover it
    -- within that long; from there on it is a consume.
    local maxWait = mode == 'wait' and since
    if maxWait then mode = 'consume' end
    -- st: every policy's state fields, then the ban's, then the backoff's, brought to now; fitting: whether
    -- cost fits.
    local stored, fitting, o = h.stored, true, 1
    if stored then for k = 1, set.fields do st[k] = h[k] end end
    if stored and ended then
      local was = ended.set
      for i = 1, #own, 5 do
        rebase(own[i], was[i + 2], was[i + 4], own[i + 2], own[i + 4], st, o, ended.expires, ended.expires)
        o = o + own[i + 1]
      end
      o = 1
    end
    for i = 1, #set, 5 do
      local code, limit, window, capacity = set[i], set[i + 2], set[i + 3], set[i + 4]
      current(code, limit, window, capacity, st, o, stored, now)
      if fitting then
        if maxWait then
          fitting = within(code, limit, window, capacity, st, o, cost, maxWait)
        elseif not fits(code, limit, window, capacity, st, o, cost, now) then
          fitting = false
        end
      end
      o = o + set[i + 1]
    end
    local last, ban, backoff = o - 1, set.ban, set.backoff
    local b = ban and o + 2 or o -- where the backoff's fields begin
    -- A key whose policies' states say no more than fresh ones, with no ban or hold in force, is as good as
    -- forgotten, whether Redis has forgotten it yet or not: its refusals in a row start again.
    local kept = stored
    if stored and ((ban and st[o] > 0) or (backoff and st[b] > 0))
      and not (ban and st[o + 1] > now) and not (backoff and st[b + 1] > now) then
      kept = false
      local q = 1
      for i = 1, #set, 5 do
        if idle(set[i], set[i + 2], set[i + 3], set[i + 4], st, q, now) > 0 then
          kept = true
          break
        end
        q = q + set[i + 1]
      end
    end
    if backoff then BACKOFF.current(st, b, kept) end
    if ban then BAN.current(st, o, kept, now) end
    local check = mode == 'consume' or mode == 'peek'
    if ban and check and BAN.banned(st, o, now) then
      return answer(0, st, last, st[o + 1], backoff and st[b + 1], override)
    end
    -- Held back: refused whatever the policies say, and (for a consume) one more refusal in the row.
    if check and backoff and st[b + 1] > now then fitting = false end
    if mode == 'peek' or (mode == 'consume' and not fitting and not set.rule) then
      return answer(fitting and 1 or 0, st, last, ban and 0, backoff and st[b + 1], override)
    end

    local applied = 1
    if mode == 'consume' and not fitting then
      -- A refusal changes nothing but what the rule says; the policies are written as they stand now.
      applied = 0
      refusedBy(set, st, o, b, cost, now)
    else
      local q = 1
      for i = 1, #set, 5 do
        if mode == 'refund' then
          refund(set[i], set[i + 2], set[i + 3], set[i + 4], st, q, cost, since, now)
        else
          apply(set[i], set[i + 2], set[i + 3], set[i + 4], st, q, cost)
        end
        q = q + set[i + 1]
      end
      if ban and mode == 'consume' then BAN.admitted(st, o) end
      if backoff and mode == 'consume' then BACKOFF.admitted(st, b) end
    end
    -- Kept until every state says no more than a fresh one; deleted when they already do.
    local quiet, q = 0, 1
    for i = 1, #set, 5 do
      quiet = max(quiet, idle(set[i], set[i + 2], set[i + 3], set[i + 4], st, q, now))
      q = q + set[i + 1]
    end
    local bannedUntil = 0
    if ban then
      quiet = max(quiet, BAN.idle(st, o, now))
      bannedUntil = st[o + 1]
    end
    if backoff then quiet = max(quiet, BACKOFF.idle(st, b, now)) end
    if ov then
      -- Kept, too, until the policies' own limits would have refilled it once the override is over, read in
      -- their terms from its end as the next check will read it: what was used of a larger burst stays used,
      -- and takes longer to refill than the level alone says.
      local remaining, q, was, later = ov.expires > 0 and ov.expires - now or 0, 1, ov.set, {}
      for i = 1, #own, 5 do
        quiet = max(quiet, remaining + idle(own[i], own[i + 2], own[i + 3], own[i + 4], st, q, now))
        if remaining > 0 then
          for k = 1, own[i + 1] do later[k] = st[q + k - 1] end
          rebase(own[i], was[i + 2], was[i + 4], own[i + 2], own[i + 4], later, 1, ov.expires, ov.expires)
          quiet = max(quiet, idle(own[i], own[i + 2], own[i + 3], own[i + 4], later, 1, now))
        end
        q = q + own[i + 1]
      end
    end
    h.dirty, h.stored = true, quiet > 0
    if quiet > 0 then
      for k = 1, set.fields do h[k] = st[k] end
      h.n, h.px = set.fields, quiet
    end
    return answer(applied, st, last, ban and bannedUntil, backoff and st[b + 1], override)
  end

  return settle
end

-- shapes[k] = { set, now, whether its deadline has passed, cost, mode, since (when a refund's tokens
-- were charged, now for none; for a wait, the most ms it waits), whether it waits }; its now is answered
-- first.
local shapes, K = {}, argv[a] + 0
for k = 1, K do
  local now, deadline, since = argv[a + 2], argv[a + 3], argv[a + 6]
  if now == '' then now = clock() else now = now + 0 end
  local mode = argv[a + 5]
  shapes[k] = { sets[argv[a + 1] + 0], now, deadline ~= '' and now > deadline + 0,
    argv[a + 4] + 0, mode, since == '' and now or since + 0, mode == 'wait' }
  if mode == 'wait' then waiting = true end
  answers[k] = now
  a = a + 6
end
a, n = a + 1, K

-- once[key]: whether the key comes only once in the batch (no table for a batch of one key). Its check
-- of one policy then needs no held copy: it reads the key, and writes it, itself.
local once
if #KEYS > 1 then
  once = {}
  for c = 1, #KEYS do
    local key = KEYS[c]
    once[key] = once[key] == nil
  end
end

local only, settle = K == 1 and shapes[1], nil
for c = 1, #KEYS do
  local shape, key = only or shapes[argv[a] + 0], KEYS[c]
  local set = shape[1]
  starts[c] = n + 1
  if shape[3] then
    n = n + 1
    answers[n] = -1
  elseif set.one and not shape[7] and (not once or once[key]) then
    settleAlone(key, set, shape[2], shape[4], shape[5], shape[6])
  elseif set.lone and not shape[7] and (not once or once[key]) and not overrideOf(key, set) then
    -- No override, in force or ended: the fast path decides, and the answer says so (0) unless Redis
    -- refused.
    settleAlone(key, set, shape[2], shape[4], shape[5], shape[6])
    if answers[starts[c]] ~= -2 then
      n = n + 1
      answers[n] = 0
    end
  else
    settle = settle or heldPath()
    settle(key, set, shape[2], shape[4], shape[5], shape[6])
  end
  a = a + 1
end

-- The held keys' writes. A key Redis refuses to write (no memory) changed nothing, so every check that
-- read it answers that: what they saw of it never landed.
if not held then return answers end
local failed
for key, h in pairs(held) do
  local written
  if h.dirty and h.stored then
    for k = 1, h.n do h[k] = num(h[k]) end
    written = redis.pcall('SET', key, table.concat(h, ':', 1, h.n), 'PX', format('%d', h.px))
  elseif h.dirty and h.raw then
    written = redis.pcall('DEL', key)
  end
  if type(written) == 'table' and written.err then
    failed = failed or {}
    failed[key] = written.err
  end
end
if not failed then return answers end
local kept, last = answers, n
answers, n = {}, K
for k = 1, K do answers[k] = kept[k] end
for c = 1, #KEYS do
  local from, to = starts[c], (starts[c + 1] or last + 1) - 1
  if failed[KEYS[c]] and kept[from] >= 0 then
    refused(failed[KEYS[c]])
  else
    for k = from, to do
      n = n + 1
      answers[n] = kept[k]
    end
  end
end
return answers
