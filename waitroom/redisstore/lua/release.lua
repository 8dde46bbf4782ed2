-- release.lua: Store.Release. ARGV: the visitor's id. Reply: {found (1/0)}.
-- A session that already ran out is not found, and counts as expired.

local ID = ARGV[1]
local now = clock()
local _, base, _, _, _, ttl = room()
-- Release gets no limits; the lifetime admit.lua last wrote will do, and
-- an hour if there is none.
ttl = ttl or 3600000

local untilUs = tonumber(redis.call('ZSCORE', K_ACTIVE, ID))
if untilUs then
  redis.call('ZREM', K_ACTIVE, ID)
  redis.call('HDEL', K_CLIENTS, ID)
  if untilUs > now then
    bump('released', 1, ttl)
    return {1}
  end
  bump('expired', 1, ttl)
  return {0}
end
local t = tonumber(redis.call('ZSCORE', K_QUEUE, ID))
if t then
  drop(ID, t, base)
  bump('released', 1, ttl)
  bump('left', 1, ttl)
  return {1}
end
return {0}
