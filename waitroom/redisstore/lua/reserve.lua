-- reserve.lua: Joiner.Reserve, a block of numbers for a gateway's
-- newcomers (waitroom/joinbatch.go). ARGV: the limits block (prelude.lua),
-- then n, the numbers wanted, and the highest ticket the gateway saw in the
-- room lately (waitroom.Visitor.Known, 0 for none).
-- Reply: {the first number of the block (0: none, ask decide.lua), flags
-- (F_REPAIRED when the counter was behind the gateway's word)}.
--
-- As decide.lua hands out one number: the room is made when it has no
-- counter, a counter behind KNOWN is mended first (a failover lost its
-- last writes), and the numbers count as issued. They are pending (above
-- floor, their K_PLACED bits clear), so the places behind count them until
-- place.lua places them or releases the block's unused tail. A room in its
-- recovery grace, or one whose data the gateway knows was lost (KNOWN
-- below the seed), gives no block: decide.lua starts and keeps the grace,
-- one newcomer at a time.

local N, KNOWN = tonumber(ARGV[LIMIT_ARGS + 1]), tonumber(ARGV[LIMIT_ARGS + 2]) or 0
local now = clock()
local L = limits()
local seed, _, grace, _, pbase, _, seq, mended = room()
if not seed then
  seed, seq = now, now
  redis.call('HSET', K_META, 'seed', seed, 'seq', seed, 'base', now + 1, 'sweep', 0,
    'floor', now, 'pbase', now + 1, 'marks', string.format('%d:%d', now, seed), 'ttl', L.dataTTL)
  redis.call('PEXPIRE', K_META, L.metaTTL)
  pbase = now + 1
end
if N < 1 or (grace ~= nil and now < grace) or (KNOWN > 0 and KNOWN < seed) then
  return {0, 0}
end
local flags = 0
if KNOWN > seq and KNOWN - seq <= MEND_MAX then
  -- The bound decide.lua keeps on one master's repairs (mbase).
  local mb = redis.call('HMGET', K_META, 'mbase', 'replid')
  if mended == nil or not tonumber(mb[1]) or KNOWN <= tonumber(mb[1]) + MEND_MAX or (replid() or '') ~= (mb[2] or '') then
    seq = mend(KNOWN, seq, pbase, grace, now, L)
    flags = F_REPAIRED
  end
end
local last = redis.call('HINCRBY', K_META, 'seq', N)
bump('issued', N, L.dataTTL)
if L.prequeue then
  redis.call('HSETNX', K_META, 'preq_min', last - N + 1)
  redis.call('HSET', K_META, 'preq_max', last)
end
return {last - N + 1, flags}
