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
--
-- The marks in K_SEEN go FIELDS at a time in one BITFIELD: an entry is
-- the 56-bit big-endian number stamp writes with SETRANGE, so "SET u56
-- #i" lays out the same seven bytes at entry i. A tick's marks cost Redis
-- a command per FIELDS polls, not one per poll, and no more CPU.

local FIELDS = 1000
local now = clock()
local base = tonumber(redis.call('HGET', K_META, 'base'))
local size = redis.call('STRLEN', K_SEEN)
local value = string.format('%d', now)
local n = 0
local ops = {}

local function flush()
  if #ops > 0 then
    redis.call('BITFIELD', K_SEEN, unpack(ops))
    ops = {}
  end
end

for i = 1, #ARGV - 1, 2 do
  local id, t = ARGV[i], tonumber(ARGV[i + 1])
  if base ~= nil and t ~= nil and t >= base then
    if (t - base + 1) * SEEN_BYTES <= size then
      ops[#ops + 1] = 'SET'
      ops[#ops + 1] = 'u56'
      ops[#ops + 1] = string.format('#%d', t - base)
      ops[#ops + 1] = value
      n = n + 1
      if #ops >= 4 * FIELDS then
        flush()
      end
    end
  elseif t ~= nil then
    n = n + redis.call('ZADD', K_RSEEN, 'XX', 'CH', now, id)
  end
end
flush()
return {n}
