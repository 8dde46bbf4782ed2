-- autostart.lua: AutopilotStarts.AutopilotStart, whether a room with
-- autopilot.start_above is quiet or on, one decision for every instance
-- (waitroom/autopilot_start.go holds the same rule in Go, for the memory
-- store: StartRecord.Judge). KEYS[1]: the room's stats hash (its join
-- count), KEYS[2]: its line, KEYS[3]: the start_above hash, under the
-- room's hash tag. ARGV: start_above in thousandths of an arrival per
-- second, the window and the hold (microseconds), 1 if the controller's
-- last step showed strain.
-- Reply: {1 if on, 1 if the arrivals were judged, their rate
-- (thousandths per second), how long the conditions for quiet have held
-- (microseconds, on only), 1 if this call switched the room}.
--
-- The hash keeps the first sample of the join count in each tenth of the
-- window (12 slots, s<i> and j<i>), the state (on) and since when the
-- conditions for quiet hold (calm, 0: they do not); known once judged.
-- Only integers below 2^53 and the floors Go's integer division makes.

local K_SJ, K_SQ, K_START = KEYS[1], KEYS[2], KEYS[3]
local ABOVE, WIN, HOLD, STRAINED = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]) == 1
local SLOTS = 12

local now = clock()
local joined = tonumber(redis.call('HGET', K_SJ, 'joined')) or 0
local waiting = redis.call('ZCARD', K_SQ)
local h = redis.call('HGETALL', K_START)
local st = {}
for i = 1, #h, 2 do st[h[i]] = tonumber(h[i + 1]) end

local width = math.max(math.floor(WIN / 10), 1)
for i = 0, SLOTS - 1 do
  if st['s' .. i] and st['j' .. i] > joined then
    -- The count went back (the room made again): the samples start over.
    for k = 0, SLOTS - 1 do st['s' .. k], st['j' .. k] = nil, nil end
    break
  end
end
local slot = math.floor(now / width) % SLOTS
local at = st['s' .. slot]
if not at or math.floor(at / width) ~= math.floor(now / width) then
  st['s' .. slot], st['j' .. slot] = now, joined
end
local bt, bj
for i = 0, SLOTS - 1 do
  local t = st['s' .. i]
  if t and now - t <= WIN and t <= now and (not bt or t < bt) then
    bt, bj = t, st['j' .. i]
  end
end

local judged, milli = 0, 0
local span = now - bt
if span * 2 >= WIN and span > 0 then
  judged = 1
  milli = math.floor((joined - bj) * 1000000000 / span)
end
local over = judged == 1 and milli > ABOVE
if st.known ~= 1 then
  st.known, st.on = 1, 0
  if waiting > 0 or STRAINED then st.on = 1 end
end
local switched = 0
if st.on ~= 1 then
  if over or STRAINED then st.on, st.calm, switched = 1, 0, 1 end
elseif judged == 1 and not over and waiting == 0 and not STRAINED then
  if (st.calm or 0) == 0 then st.calm = now end
  if now - st.calm >= HOLD then st.on, st.calm, switched = 0, 0, 1 end
else
  st.calm = 0
end
local calm = 0
if st.on == 1 and (st.calm or 0) ~= 0 then calm = now - st.calm end

local args = {'known', 1, 'on', st.on, 'calm', st.calm or 0}
for i = 0, SLOTS - 1 do
  if st['s' .. i] then
    args[#args + 1] = 's' .. i
    args[#args + 1] = st['s' .. i]
    args[#args + 1] = 'j' .. i
    args[#args + 1] = st['j' .. i]
  end
end
redis.call('DEL', K_START)
redis.call('HSET', K_START, unpack(args))
-- Unused for a day, the record goes, as the autopilot's own (autopilot.lua).
redis.call('PEXPIRE', K_START, 86400000)
return {st.on, judged, milli, calm, switched}
