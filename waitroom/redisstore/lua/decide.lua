-- decide.lua: Store.Decide. ARGV: the limits block (prelude.lua), then the
-- visitor: its id, the ticket its cookie carries (0 for none), join (J_),
-- the end of the admission its cookie carries (microseconds, 0 for none),
-- placed (1 when the cookie says its place was written), when the ticket
-- was issued and last sealed (microseconds), its network's key ('' for
-- none), a solved challenge's id ('' for none) and end (milliseconds), how
-- many times join_limit at once a network's places may run ahead in a
-- room with a challenge (waitroom.ChallengeJoinFactor), the block's
-- multiple (waitroom.BlockFactor), the tickets per network the places
-- behind count while they are pending (waitroom.PendingPerNetwork), and
-- loose ('1' for a ticket handed out without a number, which takes its
-- place at the back when it comes back), its client's key ('' for
-- none), and the tickets per client inside its network the places behind
-- count while they are pending (waitroom.PendingPerClient), and the
-- highest ticket the gateway saw in the room lately (waitroom.Visitor.Known,
-- 0 for none), by which a counter behind the tickets is found and a room
-- whose data is gone is known to have had some, and the highest ticket it
-- saw admitted there lately (waitroom.Visitor.KnownAdmitted, 0 for none),
-- by which lost admissions are found (readmit in common.lua), then the
-- cookie's entered, waitroom.LossWindow and waitroom.SealSkew (see lostAt),
-- then the block's key ('' for none), its field in the join quotas.
-- KEYS: the room's (prelude.lua), then the join quotas' first hash (K_QA
-- in common.lua), the challenge's spent key, their second (K_QB), the
-- network's pending
-- allowance, the client's and the block's, each K_META when there is
-- none.
-- Reply: {state (S_), ticket, position, line length, session end in
-- microseconds, flags (F_, added up), refusal (R_), retry after in
-- microseconds, the network's recent tickets}, and for a placed ticket
-- waiting four more: the room's progress (waitroom.Progress: epoch,
-- admitted, departed, pending ahead).
--
-- Every request of every visitor runs this, and Redis runs the whole chunk
-- on each call, so what a spike is made of (a waiting visitor's poll, an
-- admitted visitor's request, a ticket brought back to take its place) is
-- answered with a few commands and none of common.lua's helpers, which are
-- only defined in the block for the rarer cases further down. Nothing here
-- refreshes key lifetimes (ticks do, see keep in common.lua); a write that
-- may have created a key gives it its lifetime.

local V = LIMIT_ARGS
local ID, TICKET, JOIN, UNTIL = ARGV[V + 1], tonumber(ARGV[V + 2]), tonumber(ARGV[V + 3]), tonumber(ARGV[V + 4])
local PLACED = ARGV[V + 5] == '1'
local KNOWN = tonumber(ARGV[V + 17]) or 0
local KNOWN_ADMITTED = tonumber(ARGV[V + 18]) or 0
-- ENTERED: when the cookie's admission began (microseconds, 0 for
-- none); LOSS: waitroom.LossWindow, SKEW: waitroom.SealSkew
-- (microseconds). See lostAt.
local ENTERED, LOSS, SKEW = tonumber(ARGV[V + 19]) or 0, tonumber(ARGV[V + 20]) or 0, tonumber(ARGV[V + 21]) or 0
local K_SPENT, K_PENDING, K_PCLIENT, K_PBLOCK = KEYS[15], KEYS[17], KEYS[18], KEYS[19]
-- BNAME: the block's key ('' for none), its field in the join quotas.
local BNAME = ARGV[V + 22] or ''
local now = clock()

-- A visitor is in the line or in the active set, never both (a tick drops
-- a visitor from the line before it admits it). Its cookie says which to
-- look in first, the line for a placed ticket without an admission: one
-- lookup for the common cases, two when the cookie is behind (just
-- admitted by a tick) or says nothing (a new visitor, an unplaced ticket).
local t, untilUs, behind
local inLine = UNTIL == 0 and TICKET ~= 0 and PLACED
if inLine then
  t = tonumber(redis.call('ZSCORE', K_QUEUE, ID))
end
if not t then
  untilUs = tonumber(redis.call('ZSCORE', K_ACTIVE, ID))
  if untilUs and untilUs > now then
    -- Inside: the session slides forward at most once per renew interval,
    -- never past session_max from its first use, and serves no more
    -- clients at once than session_clients. The record is
    -- "started|client@seen,…", seen in whole seconds; a client unheard
    -- for waitroom.Limits.ClientQuiet (A_CLIENT_QUIET, whole seconds) is
    -- dropped, and one heard is written again only every quarter of that,
    -- so a busy session costs a write now and then, not per request. An
    -- entry of the older "started|network,…" form has no seen: dropped.
    local ttl, cap = tonumber(ARGV[A_TTL]), nil
    local clients, smax = tonumber(ARGV[A_CLIENTS]), tonumber(ARGV[A_SESSION_MAX])
    if clients > 0 or smax > 0 then
      local client, rec = ARGV[V + 15], redis.call('HGET', K_CLIENTS, ID)
      local started, list = now, ''
      if rec then
        local at, l = string.match(rec, '^(%d+)|(.*)$')
        started, list = tonumber(at) or now, l or ''
      end
      if smax > 0 and now >= started + smax then
        redis.call('ZREM', K_ACTIVE, ID)
        redis.call('HDEL', K_CLIENTS, ID)
        redis.call('HDEL', K_BEGAN, ID)
        redis.call('HINCRBY', K_STATS, 'expired', 1)
        return {S_NONE, 0, 0, 0, 0, 0, R_SESSION_MAX, 0, 0}
      end
      local changed = not rec
      if clients > 0 and client ~= '' then
        local sec = math.floor(now / 1000000)
        local quiet = math.max(1, math.floor(tonumber(ARGV[A_CLIENT_QUIET]) / 1000000))
        local live, found, oldest = {}, false, nil
        for entry in string.gmatch(list, '[^,]+') do
          local key, seen = string.match(entry, '^([^@]*)@?(%d*)$')
          seen = tonumber(seen) or 0
          if key == client then
            found = true
            if sec - seen >= math.max(1, math.floor(quiet / 4)) then
              seen, changed = sec, true
            end
          end
          if sec - seen < quiet then
            live[#live + 1] = key .. '@' .. seen
            if key ~= client and (not oldest or seen < oldest) then
              oldest = seen
            end
          else
            changed = true
          end
        end
        if not found then
          if #live >= clients then
            return {S_NONE, 0, 0, 0, 0, 0, R_SHARED, math.max((oldest + quiet) * 1000000 - now, 1000000), 0}
          end
          live[#live + 1] = client .. '@' .. sec
          changed = true
        end
        list = table.concat(live, ',')
      end
      if changed then
        if redis.call('HSET', K_CLIENTS, ID, string.format('%d|%s', started, list)) == 1 then
          redis.call('PEXPIRE', K_CLIENTS, ARGV[A_DATA_TTL], 'NX')
        end
      end
      if smax > 0 then
        cap = started + smax
      end
    end
    local want = now + ttl
    if cap and want > cap then
      want = cap
    end
    if (untilUs >= want and not (cap and untilUs > cap)) or (untilUs < want and untilUs - now >= ttl - tonumber(ARGV[A_RENEW])) then
      return {S_ADMITTED, 0, 0, 0, untilUs, F_PLACED, R_NONE, 0, 0}
    end
    redis.call('ZADD', K_ACTIVE, want, ID)
    return {S_ADMITTED, 0, 0, 0, want, F_PLACED + F_RENEWED, R_NONE, 0, 0}
  end
  if not inLine then
    t = tonumber(redis.call('ZSCORE', K_QUEUE, ID))
  end
end

if t then
  -- Waiting: record the poll (see indexed in common.lua). A write that may
  -- have created its key gives it a lifetime: for K_SEEN, one that ends the
  -- string, which is what writing into an absent key gives. The position
  -- and the line count the pending tickets (see the placement window in
  -- common.lua) ahead and in all.
  local m = redis.call('HMGET', K_META, 'base', 'floor', 'pbase', 'seq', 'seed', 'adm')
  local base, floor, pbase, seq = tonumber(m[1]), tonumber(m[2]), tonumber(m[3]), tonumber(m[4])
  -- A ticket above the counter (or the gateway's word of one), or the
  -- gateway's word of an admission above the room's high-water mark, means
  -- the store lost its last writes (a failover): repaired below, after
  -- common.lua, where this visitor is answered too. Reading seq and adm
  -- here costs nothing more.
  local adm = tonumber(m[6])
  -- A KNOWN more than MEND_MAX past the counter moves nothing below (a
  -- ticket of another store sealed with the same keys), so it must not
  -- send the poll off the fast path either.
  if seq ~= nil and (t > seq or (KNOWN > seq and KNOWN - seq <= MEND_MAX) or
      (adm ~= nil and KNOWN_ADMITTED > adm and
      KNOWN_ADMITTED >= (tonumber(m[5]) or 0))) then
    behind = t
  else
    if base ~= nil and t >= base then
      local at = (t - base) * SEEN_BYTES
      if redis.call('SETRANGE', K_SEEN, at, stamp(now)) == at + SEEN_BYTES then
        redis.call('PEXPIRE', K_SEEN, ARGV[A_DATA_TTL], 'NX')
      end
    elseif redis.call('ZADD', K_RSEEN, now, ID) == 1 then
      redis.call('PEXPIRE', K_RSEEN, ARGV[A_DATA_TTL], 'NX')
    end
    local ahead, all = 0, 0
    if floor ~= nil and pbase ~= nil and seq ~= nil then
      local lo = math.max(floor + 1, pbase)
      if seq >= lo then
        all = (seq + 1 - lo) - redis.call('BITCOUNT', K_PLACED, lo - pbase, seq - pbase, 'BIT')
      end
      if t > lo and all > 0 then
        ahead = (t - lo) - redis.call('BITCOUNT', K_PLACED, lo - pbase, t - 1 - pbase, 'BIT')
      end
    end
    -- The room's progress (waitroom.Progress), so the gate can answer the
    -- next polls without asking.
    local p = redis.call('HMGET', K_STATS, 'admitted', 'abandoned', 'left')
    return {S_WAITING, t, redis.call('ZRANK', K_QUEUE, ID) + 1 + ahead, redis.call('ZCARD', K_QUEUE) + all, 0, F_PLACED, R_NONE, 0, 0,
      tonumber(m[5]) or 0, tonumber(p[1]) or 0, (tonumber(p[2]) or 0) + (tonumber(p[3]) or 0), ahead}
  end
end

--[[ common.lua ]] -- scripts.go (assemble) splices the helpers in here

local L = limits()
if untilUs then
  -- The session ran out before a tick removed it; count it as the tick
  -- would.
  redis.call('ZREM', K_ACTIVE, ID)
  redis.call('HDEL', K_CLIENTS, ID)
  redis.call('HDEL', K_BEGAN, ID)
  bump('expired', 1, L.dataTTL)
end

-- The counter starts at the clock, so tickets keep growing even after
-- Redis lost its data.
local seed, base, grace, floor, pbase, _, seq, mended, lost, adm = room()
-- extra are flags every reply of this call carries: the grace this call
-- started, the repair it made.
local extra = 0
if not seed then
  seed, base, floor, pbase, seq = now, now + 1, now, now + 1, now
  redis.call('HSET', K_META, 'seed', seed, 'seq', seed, 'base', base, 'sweep', 0,
    'floor', floor, 'pbase', pbase, 'marks', string.format('%d:%d', now, seed), 'ttl', L.dataTTL)
  redis.call('PEXPIRE', K_META, L.metaTTL)
end
if grace == nil and KNOWN > 0 and KNOWN < seed and L.grace > 0 then
  -- The gateway saw tickets of this room older than its data lately, so
  -- the data was lost, not new: the recovery grace starts now, before
  -- anyone is let in at once, so that whoever comes first (a newcomer, or
  -- an admitted visitor a gateway served on its ticket's word or from its
  -- session cache while the store was away) no slot goes to a newcomer
  -- ahead of the sessions that held it.
  grace = now + L.grace
  redis.call('HSET', K_META, 'grace', grace)
  extra = F_GRACE
end

-- reply answers with the visitor's standing.
local function reply(state, ticket, position, line, u, flags, refusal, retry, recent)
  return {state, ticket or 0, position or 0, line or 0, u or 0, (flags or 0) + extra, refusal or R_NONE, retry or 0, recent or 0}
end

-- A ticket of this incarnation above the counter, or the gateway's word of
-- one (KNOWN): the store lost its last writes while the seed stayed (a
-- failover). mend moves the counter past it and starts the hold; a
-- waiting visitor found above the counter is answered here.
-- A number more than MEND_MAX past the counter is no lost join (a
-- failover loses the writes of a moment) but a ticket of another store
-- sealed with the same keys: it moves nothing.
-- The repairs of one master together move the counter at most MEND_MAX
-- past where the first of them found it (mbase, see mend): each repair
-- would otherwise let one more number MEND_MAX further on move it again.
local hi = 0
for _, n in ipairs({KNOWN, KNOWN_ADMITTED, TICKET, behind or 0}) do
  if n > hi and n >= seed and n - seq <= MEND_MAX then
    hi = n
  end
end
if hi > seq and mended ~= nil then
  local mb = redis.call('HMGET', K_META, 'mbase', 'replid')
  if tonumber(mb[1]) and hi > tonumber(mb[1]) + MEND_MAX and (replid() or '') == (mb[2] or '') then
    hi = 0
  end
end
-- A ticket whose place or session the store should hold and does not
-- (the hot paths above found neither) is the other sign: such misses are
-- rare (a session that ended, a place given up), so only they pay for
-- asking whether the master changed since the room's last tick.
if hi > seq or (not behind and TICKET >= seed and (UNTIL > now or PLACED) and masterChanged()) then
  seq, grace = mend(hi, seq, pbase, grace, now, L)
  mended, lost, extra = seq, now, extra + F_REPAIRED
  seed, base, _, floor, pbase = room()
end
-- Admissions the store lost (readmit): put back inside at once, so no
-- position behind them grows.
if lostAdmissions(KNOWN_ADMITTED, adm, seed, seq, L) then
  readmit(KNOWN_ADMITTED, adm, base, now, L)
  if extra < F_REPAIRED then
    extra = extra + F_REPAIRED
  end
end
if behind then
  if not redis.call('ZSCORE', K_QUEUE, ID) then
    -- readmit let this very visitor back in: it was admitted.
    local u = tonumber(redis.call('ZSCORE', K_ACTIVE, ID))
    if u then
      return reply(S_ADMITTED, behind, 0, 0, u, F_PLACED + F_BACK_INSIDE)
    end
  end
  touch(ID, behind, base, now, L.dataTTL)
  return reply(S_WAITING, behind, redis.call('ZRANK', K_QUEUE, ID) + 1 + pendingBelow(behind, floor, pbase),
    redis.call('ZCARD', K_QUEUE) + pendingBelow(seq + 1, floor, pbase), 0, F_PLACED)
end

-- atOnce lets the visitor straight in when nobody waits ahead (placed or
-- pending), no recovery grace runs and both limits allow, with the first
-- session a tick gives (Store.Admit): a visitor who never comes back frees
-- the slot as soon as an abandoned place would.
local function atOnce(ticket, flags)
  if (grace ~= nil and now < grace) or redis.call('ZCARD', K_QUEUE) > 0 or live(now) >= L.max or
      pendingBelow(ticket, floor, pbase) > 0 then
    return nil
  end
  -- About to let someone in at once, in a room with free slots: on a new
  -- master those slots may be the sessions it lost, so the room is
  -- repaired and held first. INFO costs about 2.5µs of Redis (doc.go,
  -- "Repairs"), paid only here, never on the hot paths.
  if masterChanged() then
    seq, grace = mend(seq, seq, pbase, grace, now, L)
    mended, lost, extra = seq, now, extra + F_REPAIRED
    return nil
  end
  local b = refill(now, L)
  local ok = take(b)
  save(b, L)
  if not ok then
    return nil
  end
  local u = admit(ID, now, firstSession(L))
  expiring(L.dataTTL, K_ACTIVE)
  -- When it began, by this clock (K_BEGAN): a replayed release from
  -- before now leaves it alone (release.lua).
  redis.call('HSET', K_BEGAN, ID, now)
  expiring(L.dataTTL, K_BEGAN)
  if not L.random and (adm == nil or ticket > adm) then
    adm = ticket
    redis.call('HSET', K_META, 'adm', adm) -- readmit's high-water mark, as a tick's
  end
  if L.clients > 0 or L.sessionMax > 0 then
    -- In use from now, by this client: its first request is this one.
    local client = ''
    if ARGV[V + 15] ~= '' then
      client = string.format('%s@%d', ARGV[V + 15], math.floor(now / 1000000))
    end
    if redis.call('HSET', K_CLIENTS, ID, string.format('%d|%s', now, client)) == 1 then
      expiring(L.dataTTL, K_CLIENTS)
    end
  end
  bump('joined', 1, L.dataTTL)
  bump('admitted', 1, L.dataTTL)
  counted(now, 1, L.dataTTL)
  return reply(S_ADMITTED, ticket, 0, 0, u, F_JOINED + F_PLACED + flags)
end

-- inLineAt writes the visitor's place at ticket and answers with it.
local function inLineAt(ticket, flags)
  local seq = tonumber(redis.call('HGET', K_META, 'seq'))
  local ahead = redis.call('ZCARD', K_QUEUE)
  redis.call('ZADD', K_QUEUE, ticket, ID)
  if ahead == 0 then
    redis.call('PEXPIRE', K_QUEUE, L.dataTTL) -- a new line is a new key
    if own(ticket, seed) then
      -- A new line: its K_SEEN entries start at its first ticket.
      redis.call('DEL', K_SEEN)
      base = ticket
      redis.call('HSET', K_META, 'base', base, 'sweep', 0)
    end
  end
  touch(ID, ticket, base, now, L.dataTTL)
  bump('joined', 1, L.dataTTL)
  return reply(S_WAITING, ticket, redis.call('ZRANK', K_QUEUE, ID) + 1 + pendingBelow(ticket, floor, pbase),
    ahead + 1 + pendingBelow(seq + 1, floor, pbase), 0, F_JOINED + F_PLACED + flags)
end

-- nextNumber takes the next ticket number; a pre-queue's are marked for
-- its draw.
local function nextNumber(L)
  local ticket = redis.call('HINCRBY', K_META, 'seq', 1)
  bump('issued', 1, L.dataTTL)
  if L.prequeue then
    redis.call('HSETNX', K_META, 'preq_min', ticket)
    redis.call('HSET', K_META, 'preq_max', ticket)
  end
  return ticket
end

-- lostAt is when the data this visitor's ticket relied on was lost: the
-- seed for a ticket older than the data (the full loss), the last repair
-- for one of this incarnation up to the counter it set whose place or
-- session is not found (mend: a failover lost it), within abandon_after
-- of that repair for a place (a visitor who kept polling comes back
-- within it). A failover loses only the last LOSS of writes
-- (waitroom.LossWindow), so after a repair only a cookie sealed before it
-- (give or take SKEW, the gateway's clock) whose admission began (ENTERED), or whose place may have been written
-- (issued within the placement window), at most LOSS before it is put
-- back: any other was on a replica, and its end (a release, a leave, a
-- revocation) was not lost, so a copy kept from before the end gets
-- nothing.
local lostAt
if TICKET > 0 and TICKET < seed then
  lostAt = seed
elseif mended ~= nil and TICKET > 0 and TICKET <= mended and tonumber(ARGV[V + 7]) <= lost + SKEW and
    ((UNTIL > now and ENTERED >= lost - LOSS) or
     (UNTIL <= now and PLACED and tonumber(ARGV[V + 6]) >= lost - LOSS - L.placeWithin and
      (L.abandon <= 0 or now <= lost + L.abandon))) then
  lostAt = lost
end
if lostAt then
  -- The store lost the ticket's place or session while its holder was in
  -- line or inside. Only one seen within abandon_after of the loss, and
  -- once per visitor (K_RESTORED), so a hoard of old tickets buys nothing.
  local inside = UNTIL > now
  local recent = L.abandon <= 0 or tonumber(ARGV[V + 7]) >= lostAt - L.abandon
  if (inside or recent) and redis.call('SADD', K_RESTORED, ID) == 1 then
    expiring(L.metaTTL, K_RESTORED)
    local flags = 0
    if grace == nil and L.grace > 0 and lostAt == seed then
      grace = now + L.grace
      redis.call('HSET', K_META, 'grace', grace)
      flags = F_GRACE
    end
    -- A ticket of this incarnation is used now: the places behind it stop
    -- counting it as pending.
    use(TICKET, pbase, L)
    if inside and live(now) < L.max then
      -- Back inside until its admission ends, taking no token: it held
      -- one of the room's slots all along, and counts as inside.
      local u = math.min(UNTIL, now + L.ttl)
      redis.call('ZADD', K_ACTIVE, u, ID)
      expiring(L.dataTTL, K_ACTIVE)
      -- It began when its cookie says (ENTERED, the gateway's clock in
      -- whole seconds; never after now), before the loss: a release a
      -- gateway replays that was passed on after that ends it, an older
      -- one does not (K_BEGAN; no ENTERED: no entry, which reads as 0).
      if ENTERED > 0 then
        redis.call('HSET', K_BEGAN, ID, math.min(ENTERED, now))
        expiring(L.dataTTL, K_BEGAN)
      else
        redis.call('HDEL', K_BEGAN, ID)
      end
      bump('joined', 1, L.dataTTL)
      return reply(S_ADMITTED, TICKET, 0, 0, u, F_JOINED + F_PLACED + F_BACK_INSIDE + flags)
    end
    return inLineAt(TICKET, F_BACK_IN_LINE + flags)
  end
elseif not PLACED and ARGV[V + 9] ~= '' then
  -- A solved challenge's number, once (K_SPENT), while the challenge
  -- lives (its end, the room's challenge_ttl): at its number within the
  -- placement window, else at the back, since the places behind its
  -- number stopped counting it and must not grow.
  -- The place counts against the network's ceiling (ChallengeJoinFactor
  -- times join_limit at once): past it the challenge is not spent.
  if tonumber(ARGV[V + 10]) * 1000 >= now then
    local net, factor, block = ARGV[V + 8], tonumber(ARGV[V + 11]), tonumber(ARGV[V + 12])
    local ok, retry, recent = charge(now, net, factor, block, BNAME, L, false)
    if not ok then
      bump('limited', 1, L.dataTTL)
      return reply(S_NONE, 0, 0, 0, 0, 0, R_QUOTA, retry, recent)
    end
    if not redis.call('SET', K_SPENT, 1, 'NX', 'PXAT', ARGV[V + 10]) then
      return reply(S_NONE, 0, 0, 0, 0, 0, R_CHALLENGE)
    end
    charge(now, net, factor, block, BNAME, L, true)
    local ticket = TICKET
    if ticket == 0 or not placeable(ticket, floor, pbase) then
      ticket = nextNumber(L)
    end
    use(ticket, pbase, L)
    return atOnce(ticket, 0) or inLineAt(ticket, 0)
  end
elseif TICKET > 0 and not PLACED then
  -- A ticket handed out earlier, brought back: it takes its place at its
  -- number, once, while it is young (the placement window in common.lua),
  -- and the place counts against its network's quota: what a network
  -- takes is the tickets that come back, not the first requests.
  -- A number the last repair skipped (after skip, up to mend) may have
  -- been handed out by the master that lost it: placed by number, once.
  local gap = mended ~= nil and TICKET <= mended and
    TICKET > (tonumber(redis.call('HGET', K_META, 'skip')) or mended) and redis.call('SADD', K_RESTORED, ID) == 1
  if tonumber(ARGV[V + 6]) >= now - L.placeWithin and (gap or (TICKET <= seq and placeable(TICKET, floor, pbase))) then
    local ok, retry, recent = charge(now, ARGV[V + 8], 1, tonumber(ARGV[V + 12]), BNAME, L, true)
    if not ok then
      bump('limited', 1, L.dataTTL)
      return reply(S_NONE, 0, 0, 0, 0, 0, R_QUOTA, retry, recent)
    end
    use(TICKET, pbase, L)
    return atOnce(TICKET, 0) or inLineAt(TICKET, 0)
  end
elseif TICKET == 0 and not PLACED and ARGV[V + 14] == '1' and tonumber(ARGV[V + 6]) >= now - L.placeWithin then
  -- A loose ticket (handed out past its network's pending allowance, with
  -- no number, counted by nobody) brought back: a place at the back,
  -- against its network's quota like any other.
  local ok, retry, recent = charge(now, ARGV[V + 8], 1, tonumber(ARGV[V + 12]), BNAME, L, true)
  if not ok then
    bump('limited', 1, L.dataTTL)
    return reply(S_NONE, 0, 0, 0, 0, 0, R_QUOTA, retry, recent)
  end
  local ticket = nextNumber(L)
  use(ticket, pbase, L)
  return atOnce(ticket, 0) or inLineAt(ticket, 0)
end

if JOIN == J_NONE then
  return reply(S_NONE)
end
-- A newcomer: a number in arrival order, refused past max_waiting or when
-- its network or block has no place left this period (a network may run
-- further ahead in a room with a challenge, but no further than that).
-- The number itself counts nothing against the quota: the place does,
-- when it is taken (at once here, or when the ticket comes back). A ticket
-- goes in at once when the room has room; else the places behind count it
-- while it is pending, up to the network's pending allowance, past which
-- it is loose: no number, counted by nobody, a place at the back when it
-- comes back. So a flood that never comes back spends nobody's quota, and
-- moves nobody's position by more than its network's allowance.
if L.maxWaiting > 0 and redis.call('ZCARD', K_QUEUE) >= L.maxWaiting then
  bump('full', 1, L.dataTTL)
  return reply(S_NONE, 0, 0, 0, 0, 0, R_FULL)
end
local burst = 1
if JOIN == J_NUMBER then
  burst = tonumber(ARGV[V + 11])
end
local ok, retry, recent = charge(now, ARGV[V + 8], burst, tonumber(ARGV[V + 12]), BNAME, L, false)
if not ok then
  bump('limited', 1, L.dataTTL)
  return reply(S_NONE, 0, 0, 0, 0, 0, R_QUOTA, retry, recent)
end
-- loose spends a unit of each pending allowance the ticket meets: its
-- network's (PendingPerNetwork a placement window), its client's inside
-- it (PendingPerClient, so one address of a NAT cannot take the
-- network's all) and its block's (BlockFactor times the network's, so a
-- flood spread over a block's networks adds up to no more). Past any of
-- them nothing is spent and the ticket (or the challenge's number) is
-- loose: nobody counts it. The client's bound is for challenges only
-- (perClient): a loose challenge goes to the back after its work, while a
-- loose ticket is placed a page refresh later, and a household or PC-bang
-- behind one address keeps its network's whole allowance of tickets.
local function loose(perClient)
  if K_PENDING == K_META then
    return false
  end
  local n = tonumber(ARGV[V + 13])
  local allowances = {{K_PENDING, n}}
  if perClient and K_PCLIENT ~= K_META then
    allowances[#allowances + 1] = {K_PCLIENT, tonumber(ARGV[V + 16])}
  end
  if K_PBLOCK ~= K_META then
    allowances[#allowances + 1] = {K_PBLOCK, n * tonumber(ARGV[V + 12])}
  end
  for _, a in ipairs(allowances) do
    if quotaAt(a[1], now) - now > (L.placeWithin / a[2]) * (a[2] - 1) then
      return true
    end
  end
  for _, a in ipairs(allowances) do
    gcra(a[1], now, a[2], L.placeWithin, false)
  end
  return false
end
if JOIN == J_NUMBER then
  if loose(true) then
    return reply(S_NONE, 0, 0, 0, 0, 0, R_NONE, 0, recent)
  end
  return reply(S_NONE, nextNumber(L), 0, 0, 0, 0, R_NONE, 0, recent)
end
local ticket = nextNumber(L)
local inside = atOnce(ticket, 0)
if inside then
  use(ticket, pbase, L)
  local _, _, after = charge(now, ARGV[V + 8], 1, tonumber(ARGV[V + 12]), BNAME, L, true)
  inside[9] = after
  return inside
end
if loose(false) then
  use(ticket, pbase, L)
  return reply(S_WAITING, 0, 0, 0, 0, F_JOINED, R_NONE, 0, recent)
end
-- Behind everyone placed and every ticket ahead that may still come back:
-- the place this ticket will take.
local line = redis.call('ZCARD', K_QUEUE) + pendingBelow(ticket, floor, pbase) + 1
return reply(S_WAITING, ticket, line, line, 0, F_JOINED, R_NONE, 0, recent)
