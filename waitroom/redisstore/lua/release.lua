-- release.lua: Store.ReleaseAt (and Release). ARGV: the visitor's id, and
-- the latest time its session may have begun to be ended (microseconds of
-- this clock; 0 for any session). Reply: {found (1/0), now}: now is this
-- clock at the release, which a gateway keeps to replay the release after
-- a repair with it as ARGV[2] (waitroom/repair.go).
-- A session that already ran out is not found, and counts as expired. A
-- session that began after ARGV[2] (K_BEGAN; one with no entry began at
-- 0) is not this release's: it is left alone, and not found. A place in
-- line is given up whatever ARGV[2] says.

local ID = ARGV[1]
local BEGAN = tonumber(ARGV[2]) or 0
-- waitroom.MaxLeftTickets
local LEFT_TICKETS = 64
local now = clock()
local _, base, _, _, _, ttl, _, _, lost = room()
-- Release gets no limits; the lifetime admit.lua last wrote will do, and
-- an hour if there is none.
ttl = ttl or 3600000

local untilUs = tonumber(redis.call('ZSCORE', K_ACTIVE, ID))
if untilUs then
  if BEGAN > 0 and (tonumber(redis.call('HGET', K_BEGAN, ID)) or 0) > BEGAN then
    -- Begun after the release this replays: a later session of the same
    -- visitor, which nobody released.
    return {0, now}
  end
  redis.call('ZREM', K_ACTIVE, ID)
  redis.call('HDEL', K_CLIENTS, ID)
  redis.call('HDEL', K_BEGAN, ID)
  if lost and now <= lost + ttl * 1000 then
    -- Ended after a repair: a copy of its cookie sealed before the repair
    -- would pass for a session the failover lost (lostAt in decide.lua);
    -- it counts as put back already (K_RESTORED), so it gets nothing.
    if redis.call('SADD', K_RESTORED, ID) == 1 then
      redis.call('PEXPIRE', K_RESTORED, ttl, 'NX')
    end
  end
  if untilUs > now then
    bump('released', 1, ttl)
    return {1, now}
  end
  bump('expired', 1, ttl)
  return {0, now}
end
local t = tonumber(redis.call('ZSCORE', K_QUEUE, ID))
if t then
  drop(ID, t, base)
  bump('released', 1, ttl)
  bump('left', 1, ttl)
  -- The ticket goes on the stats' list of the last LEFT_TICKETS who left
  -- (waitroom.MaxLeftTickets), comma-separated, oldest first: every
  -- instance's next tick reads it (stats.lua), so no copy of this ticket
  -- is answered from its anchor there.
  local list = redis.call('HGET', K_STATS, 'lefts') or ''
  local _, n = string.gsub(list, ',', '')
  if list ~= '' and n + 1 >= LEFT_TICKETS then
    list = string.sub(list, string.find(list, ',', 1, true) + 1)
  end
  if list ~= '' then
    list = list .. ','
  end
  redis.call('HSET', K_STATS, 'lefts', list .. string.format('%d', t))
  return {1, now}
end
return {0, now}
