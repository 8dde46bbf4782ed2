-- shuffle.lua: Store.Shuffle. ARGV: the key of this shuffle, the seed, and
-- the meta key's lifetime in milliseconds, which it gets only if this call
-- creates it: a room with an Idle keeps its short one. Reply: {shuffled,
-- fresh}: fresh is 0 when this key was used before (nothing changes; the
-- seed recorded then stays in K_META's shuffle_seed).
--
-- Everyone waiting is ordered by SHA-1 of seed..id and given, in that
-- order, the ticket numbers they hold among them; each one's last poll
-- moves with it. The work is O(n log n) in the length of the line, once
-- per sale, at its opening.

local KEY, SEED, TTL = ARGV[1], ARGV[2], tonumber(ARGV[3])
local m = redis.call('HMGET', K_META, 'shuffle_key', 'base', 'preq_min', 'preq_max')
if KEY ~= '' and m[1] == KEY then
  return {0, 0}
end
local base, preqMin, preqMax = tonumber(m[2]), tonumber(m[3]), tonumber(m[4])
if preqMin == nil or preqMax == nil then
  -- No pre-queue: nobody came early, and whoever came later keeps the
  -- order of arrival.
  redis.call('HSET', K_META, 'shuffle_key', KEY, 'shuffle_seed', SEED)
  expiring(TTL, K_META)
  return {0, 1}
end

-- Only the pre-queue's own tickets: this incarnation's from the first to
-- the last one handed out before the opening.
local all = redis.call('ZRANGEBYSCORE', K_QUEUE, preqMin, preqMax, 'WITHSCORES')
local ids, tickets, order, seen = {}, {}, {}, {}
for i = 1, #all, 2 do
  local id, t = all[i], tonumber(all[i + 1])
  ids[#ids + 1], tickets[#tickets + 1] = id, t
  order[id] = redis.sha1hex(SEED .. id)
  if indexed(t, base) then
    seen[id] = seenAt(t - base)
  else
    seen[id] = tonumber(redis.call('ZSCORE', K_RSEEN, id)) or 0
  end
end
table.sort(ids, function(a, b) return order[a] < order[b] end)

for i, id in ipairs(ids) do
  local t = tickets[i] -- ZRANGE gave them in ascending order
  redis.call('ZADD', K_QUEUE, t, id)
  if indexed(t, base) then
    redis.call('SETRANGE', K_SEEN, (t - base) * SEEN_BYTES, stamp(seen[id]))
    redis.call('ZREM', K_RSEEN, id)
  else
    redis.call('ZADD', K_RSEEN, seen[id], id)
  end
end
redis.call('HSET', K_META, 'shuffle_key', KEY, 'shuffle_seed', SEED)
expiring(TTL, K_META)
return {#ids, 1}
