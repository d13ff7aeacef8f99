/**
 * The Lua that writes, removes or reads a key's override (its layout: `wire.ts`).
 *
 * KEYS[1]  the override (`<buckets' key>:o`);  KEYS[2]  the key's buckets
 * ARGV     mode ('set', 'remove' or 'get'), now (ms, or '' for the server's clock), the limits
 *          ('limit:burst:…', for 'set'), the ttl in ms ('' for none), and how long the buckets must be
 *          kept at least after a change (ms)
 * Returns  { now, the override as stored ('' for none) }: for 'get'; the others answer ''.
 *
 * A change leaves the buckets as they are, but for their expiry: a bucket kept only as long as the old
 * limits needed to refill it would be forgotten, and start full, before the new ones refill it.
 */
export const OVERRIDE_LUA = `
local mode, now = ARGV[1], ARGV[2]
if now == '' then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now = tonumber(now)
end
if mode == 'get' then return { now, redis.call('GET', KEYS[1]) or '' } end
local changed = mode == 'set' or redis.call('EXISTS', KEYS[1]) == 1
if mode == 'set' then
  local ttl = ARGV[4]
  if ttl == '' then
    redis.call('SET', KEYS[1], '0:' .. ARGV[3])
  else
    redis.call('SET', KEYS[1], string.format('%d', now + tonumber(ttl)) .. ':' .. ARGV[3], 'PX', ttl)
  end
else
  redis.call('DEL', KEYS[1])
end
if changed then
  local left, keep = redis.call('PTTL', KEYS[2]), tonumber(ARGV[5])
  if left >= 0 and left < keep then redis.call('PEXPIRE', KEYS[2], keep) end
end
return { now, '' }
`;
