/**
 * The concurrency script the Redis store runs: `leases.ts` in Lua. A key's leases are a sorted set of
 * lease ids, each scored by when it expires, so a lease that is never released (its process crashed)
 * stops counting by itself.
 */

/**
 * KEYS[1]   the key's leases: a sorted set of lease ids scored by their expiry, in ms.
 * ARGV[1]   now in ms, or '' to read the Redis server's own clock.
 * ARGV[2]   deadline in ms by that clock, or '' for none: an acquire that runs later (the client gave up
 *           on it) takes no lease and answers {-1, now, 0}.
 * ARGV[3]   'acquire' or 'release'.
 * ARGV[4]   the lease id.
 * ARGV[5]   the most leases held at once (acquire).
 * ARGV[6]   how long a lease lives unless released, in ms (acquire).
 *
 * Returns { 1 (acquired / released) or 0 (refused: the limit is held), now, leases held after }.
 */
export const CONCURRENCY_LUA = `-- The lease script: takes ('acquire') or ends ('release') a lease of a concurrency limit.
-- KEYS[1]  the key's leases, a sorted set of lease ids scored by their expiry (ms)
-- ARGV     now ('' the server's), deadline ('' none), mode, the lease id, the most leases at once, ttl
-- Path: drop the leases past their expiry, then release, or acquire while fewer than the most are held.
-- Answers { 1 done or 0 refused, now, leases held after }; { -1, now, 0 } past its deadline.
local now = tonumber(ARGV[1])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local deadline = tonumber(ARGV[2])
if deadline and now > deadline then return { -1, now, 0 } end
local key = KEYS[1]
-- Leases past their expiry were never released: they hold nothing any more.
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
if ARGV[3] == 'release' then
  redis.call('ZREM', key, ARGV[4])
  return { 1, now, redis.call('ZCARD', key) }
end
local held = redis.call('ZCARD', key)
if held >= tonumber(ARGV[5]) then return { 0, now, held } end
redis.call('ZADD', key, now + tonumber(ARGV[6]), ARGV[4])
-- Every lease lives as long as the newest one, so the key outlives them all and then goes.
redis.call('PEXPIRE', key, ARGV[6])
return { 1, now, held + 1 }
`;
