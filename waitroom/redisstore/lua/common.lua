-- common.lua: the helpers decide.lua, admit.lua, release.lua, override.lua,
-- shuffle.lua and allow.lua share. scripts.go (assemble) puts it after prelude.lua in
-- front of each of them, or at decide.lua's splice mark (commonMark),
-- after its hot paths; either way every state change still runs as one
-- script, atomically.

-- excl is an exclusive score bound.
local function excl(x)
  return string.format('(%d', x)
end

-- seenAt reads entry i of K_SEEN; 0 when none is recorded.
local function seenAt(i)
  local s = redis.call('GETRANGE', K_SEEN, i * SEEN_BYTES, i * SEEN_BYTES + SEEN_BYTES - 1)
  if #s < SEEN_BYTES then
    return 0
  end
  local b1, b2, b3, b4, b5, b6, b7 = string.byte(s, 1, SEEN_BYTES)
  return (((((b1 * 256 + b2) * 256 + b3) * 256 + b4) * 256 + b5) * 256 + b6) * 256 + b7
end

local UNSEEN = stamp(0)

-- limits reads the ARGV block (prelude.lua) into a table, for the paths
-- that need most of it; hot paths read the one or two fields they use.
local function limits()
  return {
    dataTTL = tonumber(ARGV[A_DATA_TTL]), metaTTL = tonumber(ARGV[A_META_TTL]),
    max = tonumber(ARGV[A_MAX]), rateN = tonumber(ARGV[A_RATE_N]), ratePer = tonumber(ARGV[A_RATE_PER]),
    burst = tonumber(ARGV[A_BURST]), ttl = tonumber(ARGV[A_TTL]), renew = tonumber(ARGV[A_RENEW]),
    abandon = tonumber(ARGV[A_ABANDON]), grace = tonumber(ARGV[A_GRACE]), random = ARGV[A_RANDOM] == '1',
    joinN = tonumber(ARGV[A_JOIN_N]), joinPer = tonumber(ARGV[A_JOIN_PER]),
    maxWaiting = tonumber(ARGV[A_MAX_WAITING]), clients = tonumber(ARGV[A_CLIENTS]),
    sessionMax = tonumber(ARGV[A_SESSION_MAX]), prequeue = ARGV[A_PREQUEUE] == '1',
    placeWithin = tonumber(ARGV[A_PLACE_WITHIN]), overrideTTL = tonumber(ARGV[A_OVERRIDE_TTL]),
  }
end

-- room reads the counter's fields: seed is nil for a room never joined
-- (or whose data is gone); base is the ticket of K_SEEN's entry 0; grace is
-- the end of the recovery grace, nil until a restore starts it; floor is
-- the highest ticket too old to be placed, pbase the ticket of K_PLACED's
-- bit 0 (see placeable); ttl the data keys' lifetime, for release.lua.
-- seq is the last ticket handed out; mend and lost the counter and the
-- time of the last repair (see mend), nil before any; adm the highest
-- ticket the room admitted (see readmit), nil before any.
local function room()
  local m = redis.call('HMGET', K_META, 'seed', 'base', 'grace', 'floor', 'pbase', 'ttl', 'seq', 'mend', 'lost', 'adm')
  return tonumber(m[1]), tonumber(m[2]), tonumber(m[3]), tonumber(m[4]), tonumber(m[5]), tonumber(m[6]),
    tonumber(m[7]), tonumber(m[8]), tonumber(m[9]), tonumber(m[10])
end

-- firstSession is the session a tick or an immediate admission gives,
-- in microseconds: short until used, so a visitor who never comes to use
-- it frees the slot as soon as an abandoned place would.
local function firstSession(L)
  if L.abandon > 0 and L.abandon < L.ttl then
    return L.abandon
  end
  return L.ttl
end

-- keep makes keys outlive the room's last activity by ttl, so a room nobody
-- uses any more disappears by itself. A key is refreshed once half its time
-- is gone, not on every call: fewer writes to replicate. Ticks keep every
-- key of the room; other calls only give a key they may have created its
-- lifetime (expiring), so a poll pays for no PTTL.
local function keep(ttl, ...)
  for _, key in ipairs({...}) do
    local left = redis.call('PTTL', key)
    if left == -1 or (left >= 0 and left < ttl / 2) then
      redis.call('PEXPIRE', key, ttl)
    end
  end
end

-- expiring gives a key that a write may just have created its lifetime,
-- and leaves a key that already has one alone.
local function expiring(ttl, key)
  redis.call('PEXPIRE', key, ttl, 'NX')
end

-- own reports whether ticket t was issued by this incarnation of the
-- counter, not restored from an earlier one.
local function own(t, seed)
  return seed ~= nil and t >= seed
end

-- Where a waiting visitor's last poll is kept: tickets from base on (all of
-- this incarnation's that wait: base never passes the line's oldest one)
-- have an entry in K_SEEN at ticket - base, a few bytes each; restored
-- tickets, below the seed and scattered, go in the K_RSEEN sorted set.
-- Deciding by base rather than by seed means no index is ever negative.
local function indexed(t, base)
  return base ~= nil and t >= base
end

-- touch records that the visitor at ticket t was seen now: in K_SEEN from
-- base on, in K_RSEEN below it.
local function touch(id, t, base, now, ttl)
  if indexed(t, base) then
    local at = (t - base) * SEEN_BYTES
    redis.call('SETRANGE', K_SEEN, at, stamp(now))
    if at == 0 then
      redis.call('PEXPIRE', K_SEEN, ttl, 'NX')
    end
  elseif redis.call('ZADD', K_RSEEN, now, id) == 1 then
    redis.call('PEXPIRE', K_RSEEN, ttl, 'NX')
  end
end

-- The placement window (waitroom.Limits.PlaceWithin): K_PLACED has a bit
-- for each ticket from pbase on, set once the ticket is used (placed, or
-- let in at once); tickets above floor were handed out less than a window
-- ago. A pending ticket is one above floor whose bit is clear: its holder
-- may still come back, so the places behind it count it and a position
-- never grows when it does; once floor passes it, it counts nowhere.
-- admit.lua moves floor on (moveFloor) and trims K_PLACED's front.

-- placeable reports whether ticket t may still take its place.
local function placeable(t, floor, pbase)
  if floor == nil or pbase == nil or t <= floor or t < pbase then
    return false
  end
  return redis.call('GETBIT', K_PLACED, t - pbase) == 0
end

-- use sets ticket t's bit.
local function use(t, pbase, L)
  if pbase ~= nil and t >= pbase then
    redis.call('SETBIT', K_PLACED, t - pbase, 1)
    expiring(L.dataTTL, K_PLACED)
  end
end

-- pendingBelow counts the pending tickets below t.
local function pendingBelow(t, floor, pbase)
  if floor == nil or pbase == nil then
    return 0
  end
  local lo = math.max(floor + 1, pbase)
  if t <= lo then
    return 0
  end
  return (t - lo) - redis.call('BITCOUNT', K_PLACED, lo - pbase, t - 1 - pbase, 'BIT')
end

--[[ quota.lua ]] -- scripts.go (helpers) splices the join quotas' helpers in here

-- drop takes a visitor out of line. Its K_SEEN entry is cleared only where
-- the string reaches, so this never grows it.
local function drop(id, t, base)
  redis.call('ZREM', K_QUEUE, id)
  if not indexed(t, base) then
    redis.call('ZREM', K_RSEEN, id)
  elseif (t - base + 1) * SEEN_BYTES <= redis.call('STRLEN', K_SEEN) then
    redis.call('SETRANGE', K_SEEN, (t - base) * SEEN_BYTES, UNSEEN)
  end
end

-- live counts the sessions that have not run out; a session is over at its
-- expiry instant.
local function live(now)
  return redis.call('ZCOUNT', K_ACTIVE, excl(now), '+inf')
end

-- The admission token bucket: refill reads it once and adds what the time
-- since the last refill earned, take spends from the copy, save writes it
-- back. An absent bucket is full. An unlimited rate never touches it.
local function refill(now, L)
  if L.rateN <= 0 then
    return nil
  end
  local b = redis.call('HMGET', K_BUCKET, 'tokens', 'last')
  local tokens, last = tonumber(b[1]), tonumber(b[2])
  if not tokens or not last then
    tokens, last = L.burst, now
  end
  if now > last then
    -- The product first: whole tokens come out exact.
    tokens = math.min(L.burst, tokens + (now - last) * L.rateN / L.ratePer)
    last = now
  else
    -- A clock that stepped back earns nothing; the burst may have shrunk.
    tokens = math.min(L.burst, tokens)
  end
  return {tokens = tokens, last = last}
end

local function take(b)
  if b == nil then
    return true
  end
  if b.tokens < 1 then
    return false
  end
  b.tokens = b.tokens - 1
  return true
end

local function save(b, L)
  if b ~= nil then
    redis.call('HSET', K_BUCKET, 'tokens', b.tokens, 'last', b.last)
    expiring(L.dataTTL, K_BUCKET)
  end
end

-- counted records n admissions in the current second; K_MINUTE holds one
-- field per second of the last minute.
local function counted(now, n, ttl)
  if n <= 0 then
    return
  end
  local sec = math.floor(now / 1000000)
  if redis.call('HINCRBY', K_MINUTE, sec, n) == n then
    -- A new second: forget those that left the minute. A new field is
    -- also the only way the key may just have been created.
    for _, f in ipairs(redis.call('HKEYS', K_MINUTE)) do
      if tonumber(f) <= sec - 60 then
        redis.call('HDEL', K_MINUTE, f)
      end
    end
    expiring(ttl, K_MINUTE)
  end
end

-- admit gives the visitor a session of dur microseconds from now. Its
-- callers record when a new session began in K_BEGAN (id to microseconds,
-- this clock), a tick's all in one HSET, so that a release a gateway
-- replays after a repair (release.lua's conditional form) ends only the
-- sessions begun before that release. A session put back by a repair
-- began before the loss, its admission lost with it: readmit records its
-- holder's last poll in line, decide.lua's restore from a cookie the
-- cookie's ENTERED; no entry reads as 0.
local function admit(id, now, dur)
  local untilUs = now + dur
  redis.call('ZADD', K_ACTIVE, untilUs, id)
  return untilUs
end

-- bump adds to the running totals. Only a new field (HINCRBY answers n)
-- can mean a new key.
local function bump(field, n, ttl)
  if n > 0 and redis.call('HINCRBY', K_STATS, field, n) == n then
    expiring(ttl, K_STATS)
  end
end

-- markUsed sets the K_PLACED bits of tickets lo to hi: whole bytes with one
-- SETRANGE, the ragged ends bit by bit.
local function markUsed(lo, hi, pbase, ttl)
  lo = math.max(lo, pbase)
  if hi < lo then
    return
  end
  local i, last = lo - pbase, hi - pbase
  while i <= last and i % 8 ~= 0 do
    redis.call('SETBIT', K_PLACED, i, 1)
    i = i + 1
  end
  local bytes = math.floor((last + 1 - i) / 8)
  if bytes > 0 then
    redis.call('SETRANGE', K_PLACED, i / 8, string.rep('\255', bytes))
    i = i + bytes * 8
  end
  while i <= last do
    redis.call('SETBIT', K_PLACED, i, 1)
    i = i + 1
  end
  expiring(ttl, K_PLACED)
end

-- replid is the replication id of the server running the script: a
-- replica promoted to master takes a new one, and so does a server that
-- restarts, so a room whose K_META holds another one lives on a server
-- that may lack the last writes of the one that served it. INFO costs
-- about as much as a few commands (doc.go, "Repairs"), so it is asked once
-- a tick (admit.lua), on the rare misses of decide.lua and in mend.
local function replid()
  -- pcall: INFO is in ACL's @dangerous category, which a least-privilege
  -- user (+@all -@dangerous) lacks. Without it there is no id (nil), and a
  -- failover is found by the counter and the gateways' hints alone.
  local info = redis.pcall('INFO', 'replication')
  if type(info) ~= 'string' then
    return nil
  end
  return string.match(info, 'master_replid:(%w+)')
end

-- masterChanged reports whether the room's data was served by another
-- master (or this one before a restart) than the one running the script
-- now; the first call records the id.
local function masterChanged()
  local id = replid()
  if not id then
    return false
  end
  local was = redis.call('HGET', K_META, 'replid')
  if not was then
    redis.call('HSET', K_META, 'replid', id)
    return false
  end
  return was ~= id
end

-- mend repairs a room whose store lost its last writes while its seed
-- stayed (a failover to a replica that lagged; doc.go, "Repairs"): the
-- counter moves JUMP past hi, the highest ticket known to have been
-- handed out, so no number is handed out twice again. The numbers from
-- the old counter to hi were handed out: they stay pending (the places
-- behind count them, so no position grows when their holders come back
-- to be placed by number). The JUMP numbers after hi may have been handed
-- out by gateways that have not said so yet: marked used, they count for
-- nobody, and one brought back is placed by number once (skip to mend).
-- mend and lost remember the repair, so that tickets up to mend whose
-- place or session vanished are put back (decide.lua); and for HOLD
-- nobody new goes in. It returns the new counter and the end of the hold.
local function mend(hi, seq, pbase, grace, now, L)
  hi = math.max(hi, seq)
  local to = hi + JUMP
  local hold = now + math.min(HOLD, L.grace)
  if grace ~= nil and grace > hold then
    hold = grace
  end
  if pbase ~= nil then
    markUsed(hi + 1, to, pbase, L.dataTTL)
  end
  -- mbase: the counter the first repair under this master found, which
  -- bounds how far its repairs move the counter (decide.lua, MEND_MAX).
  local id = replid() or ''
  local mb = redis.call('HMGET', K_META, 'mbase', 'replid')
  if not tonumber(mb[1]) or mb[2] ~= id then
    redis.call('HSET', K_META, 'mbase', seq)
  end
  redis.call('HSET', K_META, 'seq', to, 'mend', to, 'lost', now, 'skip', hi, 'grace', hold, 'replid', id)
  redis.call('HINCRBY', K_META, 'repairs', 1)
  return to, hold
end

-- The admissions a failover lost (doc.go, "Repairs"). In a room that
-- admits from the head of its line (not random), every ticket up to the
-- highest one admitted was admitted or dropped by the time it was; adm,
-- in K_META, is that high-water mark, written with the admissions in the
-- same script, so a master that has adm has the admissions up to it. A
-- gateway's word of a higher one (waitroom.Visitor.KnownAdmitted: from
-- its ticks' results and the admitted tickets it serves) means this
-- master lost the admissions above adm: their visitors are still in line,
-- at its head, ahead of everyone who waits, and every position behind
-- them would grow by their number until they went in again.
--
-- lostAdmissions reports whether hint says so: a ticket of this
-- incarnation (a full loss is the recovery grace's), not past the counter
-- (mend moves it past first), above an adm this master has (a room with
-- none admitted nobody here that it could have lost, or ran code from
-- before adm: nothing to compare with).
local function lostAdmissions(hint, adm, seed, seq, L)
  return not L.random and adm ~= nil and seed ~= nil and hint > adm and hint >= seed and hint <= seq
end

-- readmit moves the visitors in line above adm and at or below hint into
-- the active set, with a tick's first session (short until used), and
-- moves adm to hint. They were inside: counting them is what keeps
-- max_active honest, since leaving them out would let the new master
-- admit one more per lost admission while they are still on the site. If
-- slots were reused inside the lost window (a release or an expiry lost
-- too, a gateway's replay of its releases fixes the first), they may be
-- more than max_active for a moment; they go in all the same, because
-- they really are inside, and nobody new goes in until the count drops
-- below. The only ones in that range who were not inside are tickets
-- placed late by number (pending, then brought back) inside the lost
-- window: they stood at the head, next to go in, so letting them in one
-- tick early breaks nobody's order.
-- The cost is bounded: at most max_active + BATCH visitors, the queue's
-- head range. That is enough: the lost admissions still inside hold at
-- most max_active slots, and a tick admits at most BATCH, so more than
-- that above adm can only be admissions whose sessions ended in the
-- window; what is left past the cap is moved by the next call, since adm
-- then only reaches the last one moved. It returns how many it moved and
-- the new adm.
local function readmit(hint, adm, base, now, L)
  local cap = math.max(L.max, 0) + BATCH
  local ids = redis.call('ZRANGEBYSCORE', K_QUEUE, excl(adm), hint, 'WITHSCORES', 'LIMIT', 0, cap)
  local n = #ids / 2
  local first = firstSession(L)
  for i = 1, #ids, 2 do
    local id, t = ids[i], tonumber(ids[i + 1])
    -- When its lost session began, for a release a gateway replays
    -- (K_BEGAN, release.lua): not known, but not before its last poll
    -- from this place in line (K_SEEN or K_RSEEN, the old master's clock
    -- as the release's was), and a release after that poll was for this
    -- place or the session it led to, since replication keeps order: a
    -- release of an earlier session is older than the place, which this
    -- master has. No poll recorded: no entry, which reads as 0 (any
    -- replay ends it). One command each: max_active + BATCH ids may pass
    -- unpack's bound, and this runs once per failover.
    local polled
    if indexed(t, base) then
      polled = seenAt(t - base)
    else
      polled = tonumber(redis.call('ZSCORE', K_RSEEN, id)) or 0
    end
    drop(id, t, base)
    admit(id, now, first)
    if polled > 0 then
      redis.call('HSET', K_BEGAN, id, polled)
    else
      redis.call('HDEL', K_BEGAN, id)
    end
  end
  local to = hint
  if n == cap then
    to = tonumber(ids[#ids]) -- more left: the next call goes on from here
  end
  if n > 0 then
    expiring(L.dataTTL, K_ACTIVE)
    expiring(L.dataTTL, K_BEGAN)
    bump('readmitted', n, L.dataTTL)
  end
  redis.call('HSET', K_META, 'adm', to)
  redis.call('HINCRBY', K_META, 'repairs', 1)
  return n, to
end
