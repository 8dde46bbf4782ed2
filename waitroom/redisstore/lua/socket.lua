-- socket.lua: Store.Socket, an admitted session's long-lived connections.
-- KEYS[1]: the room's active set (prelude.lua's K_ACTIVE); KEYS[2]: the
-- visitor's sockets, a hash of socket id to when it was last held
-- (microseconds), which expires once none is held for the stale time.
-- ARGV: the visitor's id, the socket's id, the operation (O_ below), the
-- most sockets a session may hold (0: no cap), the stale time in
-- microseconds. Reply: {result} (X_ below).

local O_OPEN, O_HOLD, O_CLOSE = 1, 2, 3
local X_OK, X_ENDED, X_TOO_MANY = 0, 1, 2

local K_SESSIONS, K_SOCKETS = KEYS[1], KEYS[2]
local ID, SOCK, OP, MAX, STALE = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])

if OP == O_CLOSE then
  redis.call('HDEL', K_SOCKETS, SOCK)
  return {X_OK}
end
local now = clock()
local untilUs = tonumber(redis.call('ZSCORE', K_SESSIONS, ID))
if not untilUs or untilUs <= now then
  redis.call('DEL', K_SOCKETS)
  return {X_ENDED}
end
if OP == O_OPEN and MAX > 0 then
  -- Bounded: a session never holds more than MAX fresh entries, and stale
  -- ones are dropped here.
  local live, all = 0, redis.call('HGETALL', K_SOCKETS)
  for i = 1, #all, 2 do
    if tonumber(all[i + 1]) < now - STALE then
      redis.call('HDEL', K_SOCKETS, all[i])
    elseif all[i] ~= SOCK then
      live = live + 1
    end
  end
  if live >= MAX then
    return {X_TOO_MANY}
  end
end
redis.call('HSET', K_SOCKETS, SOCK, now)
redis.call('PEXPIRE', K_SOCKETS, math.ceil(STALE / 1000) + 1)
return {X_OK}
