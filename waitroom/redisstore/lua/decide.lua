-- decide.lua: Store.Decide. ARGV: the limits block (common.lua), then the
-- visitor's id, the ticket its cookie carries (0 for none), join (1/0) and
-- the end of the admission its cookie carries in microseconds (0 for none).
-- Reply: {state (0 none, 1 waiting, 2 admitted), ticket, position, waiting,
-- session end in microseconds, joined (1/0), renewed (1/0)}.

local L = limits()
local ID, TICKET = ARGV[LIMIT_ARGS + 1], tonumber(ARGV[LIMIT_ARGS + 2])
local JOIN, UNTIL = ARGV[LIMIT_ARGS + 3] == '1', tonumber(ARGV[LIMIT_ARGS + 4])
local now = clock()

-- touch records a poll of a waiting visitor (see indexed in common.lua).
local function touch(t, base)
  if indexed(t, base) then
    redis.call('BITFIELD', K_SEEN, 'SET', SEEN_TYPE, seenIndex(t - base), now)
    keep(L.dataTTL, K_SEEN)
  else
    redis.call('ZADD', K_RSEEN, now, ID)
    keep(L.dataTTL, K_RSEEN)
  end
end

local function waiting(t, joined)
  local rank = redis.call('ZRANK', K_QUEUE, ID)
  return {1, t, rank + 1, redis.call('ZCARD', K_QUEUE), 0, joined, 0}
end

-- An admitted visitor costs one lookup; the session slides forward at most
-- once per renew interval.
local untilUs = tonumber(redis.call('ZSCORE', K_ACTIVE, ID))
if untilUs and untilUs > now then
  local renewed = 0
  if untilUs - now < L.ttl - L.renew then
    untilUs = admit(ID, now, L.ttl)
    keep(L.dataTTL, K_ACTIVE)
    renewed = 1
  end
  return {2, 0, 0, 0, untilUs, 0, renewed}
elseif untilUs then
  -- The session ran out before a tick removed it; count it as the tick would.
  redis.call('ZREM', K_ACTIVE, ID)
  bump('expired', 1, L.dataTTL)
end

local seed, base, grace = room()
local t = tonumber(redis.call('ZSCORE', K_QUEUE, ID))
if t then
  touch(t, base)
  return waiting(t, 0)
end
if not JOIN then
  return {0, 0, 0, 0, 0, 0, 0}
end

-- A new visitor. The counter starts at the clock, so tickets keep growing
-- even after Redis lost its data.
if not seed then
  seed, base = now, now + 1
  redis.call('HSET', K_META, 'seed', seed, 'seq', seed, 'base', base, 'sweep', 0)
end
keep(L.metaTTL, K_META)
local ticket, restored = nil, false
if TICKET > 0 and TICKET < seed and redis.call('SADD', K_RESTORED, ID) == 1 then
  -- A place held before the data was lost: back to it, once; the first
  -- such return starts the recovery grace.
  ticket, restored = TICKET, true
  keep(L.metaTTL, K_RESTORED)
  if grace == nil and L.grace > 0 then
    grace = now + L.grace
    redis.call('HSET', K_META, 'grace', grace)
  end
else
  ticket = redis.call('HINCRBY', K_META, 'seq', 1)
end
bump('joined', 1, L.dataTTL)

if restored and UNTIL > now then
  -- Inside when the data was lost: back inside until its admission ends,
  -- taking no token and counting no new admission, even over the room's
  -- limit (Store.Decide says why).
  local u = math.min(UNTIL, now + L.ttl)
  redis.call('ZADD', K_ACTIVE, u, ID)
  keep(L.dataTTL, K_ACTIVE)
  return {2, ticket, 0, 0, u, 1, 0}
end

local empty = redis.call('ZCARD', K_QUEUE) == 0
local held = grace ~= nil and now < grace
if empty and not held and live(now) < L.max then
  local b = refill(now, L)
  local ok = take(b)
  save(b, L)
  if ok then
    local u = admit(ID, now, L.ttl)
    keep(L.dataTTL, K_ACTIVE)
    bump('admitted', 1, L.dataTTL)
    counted(now, 1, L.dataTTL)
    return {2, ticket, 0, 0, u, 1, 0}
  end
end
if empty and own(ticket, seed) then
  -- A new line: its K_SEEN entries start at its first ticket. Never at a
  -- restored one: the next new ticket would sit far beyond it.
  redis.call('DEL', K_SEEN)
  base = ticket
  redis.call('HSET', K_META, 'base', base, 'sweep', 0)
end
redis.call('ZADD', K_QUEUE, ticket, ID)
keep(L.dataTTL, K_QUEUE)
touch(ticket, base)
return waiting(ticket, 1)
