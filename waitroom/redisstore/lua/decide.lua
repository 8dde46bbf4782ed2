-- decide.lua: Store.Decide. ARGV: the limits block (prelude.lua), then the
-- visitor's id, the ticket its cookie carries (0 for none), join (1/0) and
-- the end of the admission its cookie carries in microseconds (0 for none).
-- Reply: {state (S_NONE, S_WAITING, S_ADMITTED), ticket, position, line length,
-- session end in microseconds, joined (1/0), renewed (1/0)}.
--
-- Every request of every visitor runs this, and Redis runs the whole chunk
-- on each call, so what a spike is made of (a waiting visitor's poll, an
-- admitted visitor's request, a newcomer joining the back of a line) is
-- answered with a few commands and none of common.lua's helpers, which are
-- only defined in the block for the rarer cases further down. Nothing here
-- refreshes key lifetimes (ticks do, see keep in common.lua); a write that
-- may have created a key gives it its lifetime.

local ID, JOIN, UNTIL = ARGV[LIMIT_ARGS + 1], ARGV[LIMIT_ARGS + 3] == '1', ARGV[LIMIT_ARGS + 4]
local now = clock()

-- A visitor is in the line or in the active set, never both (a tick drops
-- a visitor from the line before it admits it). Its cookie says which to
-- look in first, the line for a ticket without an admission: one lookup
-- for the common cases, two when the cookie is behind (just admitted by a
-- tick) or absent (a new visitor).
local t, untilUs
local inLine = UNTIL == '0' and ARGV[LIMIT_ARGS + 2] ~= '0'
if inLine then
  t = tonumber(redis.call('ZSCORE', K_QUEUE, ID))
end
if not t then
  untilUs = tonumber(redis.call('ZSCORE', K_ACTIVE, ID))
  if untilUs and untilUs > now then
    -- Inside: the session slides forward at most once per renew interval.
    local ttl = tonumber(ARGV[A_TTL])
    if untilUs - now >= ttl - tonumber(ARGV[A_RENEW]) then
      return {S_ADMITTED, 0, 0, 0, untilUs, 0, 0}
    end
    untilUs = now + ttl
    redis.call('ZADD', K_ACTIVE, untilUs, ID)
    return {S_ADMITTED, 0, 0, 0, untilUs, 0, 1}
  end
  if not inLine then
    t = tonumber(redis.call('ZSCORE', K_QUEUE, ID))
  end
end

if t then
  -- Waiting: record the poll (see indexed in common.lua). A write that may
  -- have created its key gives it a lifetime: for K_SEEN, one that ends the
  -- string, which is what writing into an absent key gives.
  local base = tonumber(redis.call('HGET', K_META, 'base'))
  if base ~= nil and t >= base then
    local at = (t - base) * SEEN_BYTES
    if redis.call('SETRANGE', K_SEEN, at, stamp(now)) == at + SEEN_BYTES then
      redis.call('PEXPIRE', K_SEEN, ARGV[A_DATA_TTL], 'NX')
    end
  elseif redis.call('ZADD', K_RSEEN, now, ID) == 1 then
    redis.call('PEXPIRE', K_RSEEN, ARGV[A_DATA_TTL], 'NX')
  end
  return {S_WAITING, t, redis.call('ZRANK', K_QUEUE, ID) + 1, redis.call('ZCARD', K_QUEUE), 0, 0, 0}
end

-- Anyone else joins the line, unless join is false. The common case, a
-- new ticket at the back of a line that is already there, needs no
-- helpers either; a first ticket, a restored one, a session that just ran
-- out, an empty line (where the visitor may go straight in) take the block
-- below.
local DATA_TTL = ARGV[A_DATA_TTL]
local m = redis.call('HMGET', K_META, 'seed', 'base', 'grace')
local seed, base, grace = tonumber(m[1]), tonumber(m[2]), tonumber(m[3])
local cookie = tonumber(ARGV[LIMIT_ARGS + 2])
local ahead, ticket, restored = 0, nil, false
if JOIN and not untilUs and seed and (cookie == 0 or cookie >= seed) then
  ahead = redis.call('ZCARD', K_QUEUE)
end
if ahead > 0 then
  ticket = redis.call('HINCRBY', K_META, 'seq', 1)
  if redis.call('HINCRBY', K_STATS, 'joined', 1) == 1 then
    redis.call('PEXPIRE', K_STATS, DATA_TTL, 'NX')
  end
else
  --[[ common.lua ]] -- scripts.go (assemble) splices the helpers in here

  if untilUs then
    -- The session ran out before a tick removed it; count it as the tick
    -- would.
    redis.call('ZREM', K_ACTIVE, ID)
    bump('expired', 1, DATA_TTL)
  end
  if not JOIN then
    return {S_NONE, 0, 0, 0, 0, 0, 0}
  end
  -- The counter starts at the clock, so tickets keep growing even after
  -- Redis lost its data.
  if not seed then
    seed, base = now, now + 1
    redis.call('HSET', K_META, 'seed', seed, 'seq', seed, 'base', base, 'sweep', 0)
    redis.call('PEXPIRE', K_META, ARGV[A_META_TTL])
  end
  if cookie > 0 and cookie < seed and redis.call('SADD', K_RESTORED, ID) == 1 then
    -- A place held before the data was lost: back to it, once; the first
    -- such return starts the recovery grace.
    ticket, restored = cookie, true
    expiring(ARGV[A_META_TTL], K_RESTORED)
    local L = limits()
    if grace == nil and L.grace > 0 then
      grace = now + L.grace
      redis.call('HSET', K_META, 'grace', grace)
    end
  else
    ticket = redis.call('HINCRBY', K_META, 'seq', 1)
  end
  bump('joined', 1, DATA_TTL)

  local cookieUntil = tonumber(UNTIL)
  if restored and cookieUntil > now then
    -- Inside when the data was lost: back inside until its admission
    -- ends, taking no token and counting no new admission, even over the
    -- room's limit (Store.Decide says why).
    local u = math.min(cookieUntil, now + tonumber(ARGV[A_TTL]))
    redis.call('ZADD', K_ACTIVE, u, ID)
    expiring(DATA_TTL, K_ACTIVE)
    return {S_ADMITTED, ticket, 0, 0, u, 1, 0}
  end

  ahead = redis.call('ZCARD', K_QUEUE)
  if ahead == 0 then
    local L = limits()
    if (grace == nil or now >= grace) and live(now) < L.max then
      local b = refill(now, L)
      local ok = take(b)
      save(b, L)
      if ok then
        local u = admit(ID, now, L.ttl)
        expiring(DATA_TTL, K_ACTIVE)
        bump('admitted', 1, DATA_TTL)
        counted(now, 1, DATA_TTL)
        return {S_ADMITTED, ticket, 0, 0, u, 1, 0}
      end
    end
    if own(ticket, seed) then
      -- A new line: its K_SEEN entries start at its first ticket. Never at
      -- a restored one: the next new ticket would sit far beyond it.
      redis.call('DEL', K_SEEN)
      base = ticket
      redis.call('HSET', K_META, 'base', base, 'sweep', 0)
    end
  end
end

redis.call('ZADD', K_QUEUE, ticket, ID)
if ahead == 0 then
  redis.call('PEXPIRE', K_QUEUE, DATA_TTL) -- a new line is a new key
end
if base ~= nil and ticket >= base then
  -- Entry 0 starts the string: base moves to a ticket not yet issued only
  -- where the string is deleted (above, and in admit.lua's rebase).
  local at = (ticket - base) * SEEN_BYTES
  redis.call('SETRANGE', K_SEEN, at, stamp(now))
  if at == 0 then
    redis.call('PEXPIRE', K_SEEN, DATA_TTL, 'NX')
  end
elseif redis.call('ZADD', K_RSEEN, now, ID) == 1 then
  redis.call('PEXPIRE', K_RSEEN, DATA_TTL, 'NX')
end
if restored then
  -- Back at its old place, somewhere in the line.
  return {S_WAITING, ticket, redis.call('ZRANK', K_QUEUE, ID) + 1, ahead + 1, 0, 1, 0}
end
-- A new ticket is the highest ever issued: the back of the line.
return {S_WAITING, ticket, ahead + 1, ahead + 1, 0, 1, 0}
