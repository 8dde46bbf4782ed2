-- release.lua: Store.Release. ARGV: the visitor's id. Reply: {found (1/0)}.
-- A session that already ran out is not found, and counts as expired.

local ID = ARGV[1]
-- waitroom.MaxLeftTickets
local LEFT_TICKETS = 64
local now = clock()
local _, base, _, _, _, ttl, _, _, lost = room()
-- Release gets no limits; the lifetime admit.lua last wrote will do, and
-- an hour if there is none.
ttl = ttl or 3600000

local untilUs = tonumber(redis.call('ZSCORE', K_ACTIVE, ID))
if untilUs then
  redis.call('ZREM', K_ACTIVE, ID)
  redis.call('HDEL', K_CLIENTS, ID)
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
  return {1}
end
return {0}
