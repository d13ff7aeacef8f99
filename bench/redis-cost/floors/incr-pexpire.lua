-- The floor of the fixed window: INCR, and PEXPIRE when that made a new key.
-- KEYS[1]: the window's counter. ARGV[1]: the window (ms).
-- Returns the count, this check included (the caller compares it with the limit).
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count
