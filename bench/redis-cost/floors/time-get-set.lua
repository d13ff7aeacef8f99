-- The floor of the token bucket and of the sliding window: the Redis commands either needs to decide on
-- Redis's clock (TIME, then GET and SET ... PX of its one key) and an integer reply, with no Lua around
-- them but what passes the time along.
-- KEYS[1]: the key. ARGV[1]: its expiry (ms). Returns 1.
local time = redis.call('TIME')
redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], time[1], 'PX', ARGV[1])
return 1
