-- touch.lua: Store.Touch, the polls a gate answered from Progress. ARGV:
-- the visitors, an id and the placed ticket its cookie holds, in pairs.
-- Reply: {entries written}.
--
-- A mark goes where decide.lua's poll would put it. One is written
-- blindly, without reading what is there: a ticket that left the line
-- since (admitted, dropped) gets a mark that the sweep in admit.lua finds
-- with no visitor behind it and clears, as it does for a mark left by a
-- poll just before an admission. Nothing grows K_SEEN, so a mark never
-- lands past the line's last entry, and a restored ticket's mark is only
-- updated, never added (ZADD XX): nobody is placed by a touch.

local now = clock()
local base = tonumber(redis.call('HGET', K_META, 'base'))
local size = redis.call('STRLEN', K_SEEN)
local mark = stamp(now)
local n = 0
for i = 1, #ARGV - 1, 2 do
  local id, t = ARGV[i], tonumber(ARGV[i + 1])
  if base ~= nil and t ~= nil and t >= base then
    local at = (t - base) * SEEN_BYTES
    if at + SEEN_BYTES <= size then
      redis.call('SETRANGE', K_SEEN, at, mark)
      n = n + 1
    end
  elseif t ~= nil then
    n = n + redis.call('ZADD', K_RSEEN, 'XX', 'CH', now, id)
  end
end
return {n}
