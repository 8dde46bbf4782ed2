-- override.lua: Store.SetOverride and Store.ClearOverride, the room's
-- runtime override in K_OVERRIDE. ARGV: the key's lifetime in milliseconds,
-- then 'clear', or 'set' and the field, value pairs to merge (override.go,
-- overrideArgs). Reply: {changed}, the override's stamp in microseconds
-- after the call; 0 once cleared.

local TTL, OP = tonumber(ARGV[1]), ARGV[2]
if OP == 'clear' then
  redis.call('DEL', K_OVERRIDE)
  return {0}
elseif OP ~= 'set' then
  return redis.error_reply('override.lua: ARGV[2]: want set or clear, got ' .. tostring(OP))
end
-- Fields not named stay as they are. The stamp never goes back, even if
-- Redis's clock steps back: readers may take a later stamp for a newer
-- override.
local changed = math.max(clock(), tonumber(redis.call('HGET', K_OVERRIDE, 'changed')) or 0)
redis.call('HSET', K_OVERRIDE, 'changed', changed, unpack(ARGV, 3))
-- As long as the ticket counter: admit.lua's keep refreshes it while the
-- room is ticked, and every write does here.
redis.call('PEXPIRE', K_OVERRIDE, TTL)
return {changed}
