/**
 * Generates the reservation script: `algorithms/reservations/reservations.ts` in Lua, around the settle
 * script (`generate.ts`), which it runs as a function on the key's buckets. One call reserves, or
 * settles a reservation, by id: the record and the buckets change in one atomic step, so a settle that
 * comes twice (a retry, a second process) finds the record settled and charges nothing. The records live
 * beside the buckets, under the same hash tag, so a Cluster keeps them in one slot.
 */
import { settleScriptLua } from './generate.js';

/** The reservation script's Lua, as Redis runs it. */
export function reservationScriptLua(): string {
  return `
-- The reservation script: reserves, or settles a reservation, by id, with the key's buckets, atomically.
-- KEYS[1]  the key's buckets, as the settle script reads them
-- KEYS[2]  its open reservations: a sorted set of ids, each scored by when it ends (ms)
-- KEYS[3]  their costs: a hash of id -> 'reserved cost:when it was charged (ms)'
-- KEYS[4]  its settled reservations: a sorted set of ids, each scored by when it would have ended
-- ARGV[1]  'reserve' or 'settle';  ARGV[2]  the id
-- ARGV[3]  reserve: how long it is kept open, in ms;  ARGV[4]  reserve: the most open at once
-- ARGV[5]  settle: the true cost;  ARGV[6]  settle: the most charged beyond the reserved cost
-- ARGV[7]  where, in the settle script's ARGV, its one check's cost is (its mode and since follow)
-- ARGV[8…] the settle script's ARGV: one check on KEYS[1] (reserve: a consume of the cost to reserve)
-- Path: forget the records past their end; then reserve (unless the id is known, or too many are open)
-- or settle (if the id is open) by running the settle script's check, and write the record.
-- Answers { outcome, open after, detail, then the settle script's answers (now, the check's answer) }:
--   'reserved', 'refused' (the consume was; nothing recorded), 'too-many-open' (a peek's answer; detail:
--   when the oldest open one ends), 'duplicate' (now alone); 'settled' (detail: the reserved cost; now
--   alone), 'unknown', 'already-settled' (now alone); 'expired' (now, -1: past its deadline); and
--   'refused' with the check's answer -2 when Redis refused the buckets' key (nothing changed).
local batch = function(KEYS, ARGV)
${settleScriptLua()}
end

local format = string.format
local buckets, openKey, costsKey, settledKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local mode, id, at = ARGV[1], ARGV[2], ARGV[7] + 0
local args = {}
for i = 8, #ARGV do args[i - 7] = ARGV[i] end
-- One now for the records and the buckets: the check's, else the server's, given to the check.
local now = tonumber(args[at - 2])
if not now then
  local time = redis.call('TIME')
  now = time[1] * 1000 + math.floor(time[2] / 1000)
  args[at - 2] = format('%d', now)
end
local deadline = tonumber(args[at - 1])
if deadline and now > deadline then return { 'expired', 0, 0, now, -1 } end

-- Records past their end are forgotten: an open one stays charged what was reserved.
local ended = redis.call('ZRANGEBYSCORE', openKey, '-inf', now)
for from = 1, #ended, 1000 do
  redis.call('HDEL', costsKey, unpack(ended, from, math.min(from + 999, #ended)))
end
if #ended > 0 then redis.call('ZREMRANGEBYSCORE', openKey, '-inf', now) end
redis.call('ZREMRANGEBYSCORE', settledKey, '-inf', now)
local open = redis.call('ZCARD', openKey)

-- Each sorted set (and the hash beside the open one) lives until its last record ends.
local function keep(key, also)
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if last[2] then
    local ms = format('%d', last[2] - now)
    redis.call('PEXPIRE', key, ms)
    if also then redis.call('PEXPIRE', also, ms) end
  end
end

-- The answer: outcome, open after, detail, then the settle script's answers.
local function answer(outcome, count, detail, answers)
  local all = { outcome, count, detail }
  for k = 1, #answers do all[k + 3] = answers[k] end
  return all
end

if mode == 'settle' then
  local cost = redis.call('HGET', costsKey, id)
  if not cost then
    if redis.call('ZSCORE', settledKey, id) then return { 'already-settled', open, 0, now } end
    return { 'unknown', open, 0, now }
  end
  local sep = string.find(cost, ':', 1, true)
  local reserved = string.sub(cost, 1, sep - 1)
  -- More than 0: a penalty; less: a refund, no more than the charge made at chargedAt still holds.
  local tokens = math.min(ARGV[5] - reserved, ARGV[6] + 0)
  if tokens ~= 0 then
    args[at] = format('%.17g', math.abs(tokens))
    args[at + 1] = tokens > 0 and 'penalty' or 'refund'
    args[at + 2] = tokens > 0 and '' or string.sub(cost, sep + 1)
    local answers = batch({ buckets }, args)
    if answers[2] ~= 1 then return answer('refused', open, reserved, answers) end
  end
  local ends = redis.call('ZSCORE', openKey, id)
  redis.call('ZREM', openKey, id)
  redis.call('HDEL', costsKey, id)
  redis.call('ZADD', settledKey, ends, id)
  keep(settledKey)
  return { 'settled', open - 1, reserved, now }
end

if redis.call('ZSCORE', openKey, id) or redis.call('ZSCORE', settledKey, id) then
  return { 'duplicate', open, 0, now }
end
local maxOpen = ARGV[4] + 0
if open >= maxOpen then
  args[at + 1] = 'peek'
  local first = redis.call('ZRANGE', openKey, 0, 0, 'WITHSCORES')
  return answer('too-many-open', open, first[2], batch({ buckets }, args))
end
local answers = batch({ buckets }, args)
if answers[2] ~= 1 then return answer('refused', open, 0, answers) end
redis.call('ZADD', openKey, format('%d', now + ARGV[3]), id)
redis.call('HSET', costsKey, id, args[at] .. ':' .. format('%d', now))
-- Settled records only tell a late settle it came second: no more of them are kept than may be open.
local extra = redis.call('ZCARD', settledKey) - maxOpen
if extra > 0 then redis.call('ZREMRANGEBYRANK', settledKey, 0, extra - 1) end
keep(openKey, costsKey)
return answer('reserved', open + 1, 0, answers)
`;
}
