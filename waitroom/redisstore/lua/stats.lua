#!lua flags=no-writes
-- stats.lua: Store.Stats, one consistent snapshot. It writes nothing (the
-- flag above lets it run even when Redis refuses writes), so sessions that
-- ran out but were not removed yet are counted as expired here. It gets
-- prelude.lua's key names and clock, not common.lua's helpers. Reply:
-- {waiting, active, admitted in the last minute, measured over
-- (microseconds), joined, admitted, released, expired, abandoned, issued,
-- limited, full, left the line, the seed (the incarnation; 0 for none),
-- the repairs of this incarnation (mend in common.lua), the counter (the
-- last ticket handed out), the highest ticket admitted (adm: readmit's
-- high-water mark; 0 for none), the lowest ticket that may stand ahead
-- of a higher one (waitroom.Stats.Low: the line's first or the first
-- number above the placement window's floor, whichever is lower; 0 for
-- none), the lowest number above that floor (waitroom.Stats.Floor), the
-- number h of the line's first tickets
-- that follow (waitroom.Stats.Head, at most MAX_HEAD), those h tickets in
-- order, then the tickets of the last who left the line, oldest first
-- (release.lua)}.

local now = clock()
local sec = math.floor(now / 1000000)
local nowBound = string.format('%d', now)

local meta = redis.call('HMGET', K_META, 'seed', 'repairs', 'seq', 'adm', 'mend', 'skip', 'floor', 'pbase')
-- The counter as handed out: right after a repair's jump (seq at mend,
-- nothing handed out since) the last number handed out is the one the
-- jump started from (skip), not the JUMP numbers past it. Told to an old
-- master still taking writes in a split brain, those would read as
-- pending places and push every position there up by about JUMP.
local counter = tonumber(meta[3]) or 0
if meta[5] and tonumber(meta[5]) == counter and tonumber(meta[6]) then
  counter = tonumber(meta[6])
end
local seed = tonumber(meta[1])
local measured = 0
if seed then
  measured = math.max(0, math.min(60000000, now - seed))
end

local minute = 0
local counts = redis.call('HGETALL', K_MINUTE)
for i = 1, #counts, 2 do
  if tonumber(counts[i]) > sec - 60 then
    minute = minute + tonumber(counts[i + 1])
  end
end

local totals = redis.call('HMGET', K_STATS, 'joined', 'admitted', 'released', 'expired', 'abandoned', 'issued', 'limited', 'full', 'left')
for i = 1, 9 do
  totals[i] = tonumber(totals[i]) or 0
end
local lapsed = redis.call('ZCOUNT', K_ACTIVE, '-inf', nowBound)
local reply = {
  redis.call('ZCARD', K_QUEUE),
  redis.call('ZCOUNT', K_ACTIVE, '(' .. nowBound, '+inf'),
  minute, measured,
  totals[1], totals[2], totals[3], totals[4] + lapsed, totals[5],
  totals[6], totals[7], totals[8], totals[9], seed or 0, tonumber(meta[2]) or 0,
  counter, tonumber(meta[4]) or 0, 0, 0,
}
-- The line's first places, whose positions are their ranks unless a
-- ticket handed out below the last of them may still come back (the
-- placement window in common.lua: pendingBelow, inlined, as this script
-- has no helpers): then none. waitroom.MaxHead is MAX_HEAD.
local MAX_HEAD = 128
local head = redis.call('ZRANGE', K_QUEUE, 0, MAX_HEAD - 1, 'WITHSCORES')
local h = #head / 2
local floor, pbase = tonumber(meta[7]), tonumber(meta[8])
if floor ~= nil and pbase ~= nil then
  local low = math.max(floor + 1, pbase)
  if h > 0 and tonumber(head[2]) < low then
    low = tonumber(head[2])
  end
  reply[#reply - 1], reply[#reply] = low, math.max(floor + 1, pbase)
end
if h > 0 and floor ~= nil and pbase ~= nil then
  local last, lo = tonumber(head[#head]), math.max(floor + 1, pbase)
  if last > lo and (last - lo) - redis.call('BITCOUNT', K_PLACED, lo - pbase, last - 1 - pbase, 'BIT') > 0 then
    h = 0
  end
end
reply[#reply + 1] = h
for i = 1, h do
  reply[#reply + 1] = tonumber(head[2 * i])
end
if totals[9] > 0 then
  for t in string.gmatch(redis.call('HGET', K_STATS, 'lefts') or '', '%d+') do
    reply[#reply + 1] = tonumber(t)
  end
end
return reply
