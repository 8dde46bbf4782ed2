-- touch.lua: Store.Touch, the polls a gate answered from Progress. ARGV:
-- the visitors, an id and the placed ticket its cookie holds, in pairs,
-- in ascending order of ticket (Store.Touch sorts them; any order is
-- written right, only at more cost). Reply: {entries written}.
--
-- A mark goes where decide.lua's poll would put it. One is written
-- blindly, without reading what is there: a ticket that left the line
-- since (admitted, dropped) gets a mark that the sweep in admit.lua finds
-- with no visitor behind it and clears, as it does for a mark left by a
-- poll just before an admission. Nothing grows K_SEEN, so a mark never
-- lands past the line's last entry, and a restored ticket's mark is only
-- updated, never added (ZADD XX): nobody is placed by a touch.
--
-- The marks of a stretch of K_SEEN are merged: one GETRANGE of the
-- stretch, the new stamps laid into it here, one SETRANGE back. So a
-- tick's marks cost Redis two commands per stretch of up to SPAN bytes
-- (SPAN / SEEN_BYTES tickets), however many polls fall in it, instead of
-- one per poll. A stretch with fewer marks than one per DENSE bytes is
-- written mark by mark, as copying it would cost more than the commands.
-- The entries between the marks are written back as read, within this
-- one script: nothing else can change them meanwhile.

local SPAN, DENSE = 524288, 4096
local now = clock()
local base = tonumber(redis.call('HGET', K_META, 'base'))
local size = redis.call('STRLEN', K_SEEN)
local mark = stamp(now)
local n = 0
-- run: the byte offsets in K_SEEN of the marks of the current stretch,
-- ascending.
local run = {}

local function flush()
  local k = #run
  if k == 0 then
    return
  end
  local from = run[1]
  local to = run[k] + SEEN_BYTES
  if k <= 2 or k * DENSE < to - from then
    for _, at in ipairs(run) do
      redis.call('SETRANGE', K_SEEN, at, mark)
    end
  else
    local s = redis.call('GETRANGE', K_SEEN, from, to - 1)
    local parts, p = {}, 1
    for _, at in ipairs(run) do
      local o = at - from + 1
      if o > p then
        parts[#parts + 1] = string.sub(s, p, o - 1)
      end
      parts[#parts + 1] = mark
      p = o + SEEN_BYTES
    end
    redis.call('SETRANGE', K_SEEN, from, table.concat(parts))
  end
  n = n + k
  run = {}
end

for i = 1, #ARGV - 1, 2 do
  local id, t = ARGV[i], tonumber(ARGV[i + 1])
  if base ~= nil and t ~= nil and t >= base then
    local at = (t - base) * SEEN_BYTES
    if at + SEEN_BYTES <= size then
      local last = run[#run]
      if at ~= last then -- a repeat is written once
        if last ~= nil and (at < last or at + SEEN_BYTES - run[1] > SPAN) then
          flush() -- out of order, or past the stretch
        end
        run[#run + 1] = at
      end
    end
  elseif t ~= nil then
    n = n + redis.call('ZADD', K_RSEEN, 'XX', 'CH', now, id)
  end
end
flush()
return {n}
