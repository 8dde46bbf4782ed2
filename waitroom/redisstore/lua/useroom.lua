-- useroom.lua: Store.UseRoom, the rooms of one template in use across all
-- instances. KEYS[1]: the template's sorted set of room to last use
-- (microseconds). ARGV: the room, the most rooms in use, idle in
-- microseconds. Reply: {1} when the room is in use now, {0} when it was
-- refused.
--
-- The set holds at most max members: rooms idle for longer leave it here,
-- and it expires once no room was used for twice idle.

local K_USED = KEYS[1]
local ROOM, MAX, IDLE = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local now = clock()

redis.call('ZREMRANGEBYSCORE', K_USED, '-inf', string.format('(%d', now - IDLE))
if not redis.call('ZSCORE', K_USED, ROOM) and redis.call('ZCARD', K_USED) >= MAX then
  return {0}
end
-- GT: a clock that steps back leaves the later use standing.
redis.call('ZADD', K_USED, 'GT', now, ROOM)
redis.call('PEXPIRE', K_USED, math.ceil(2 * IDLE / 1000))
return {1}
