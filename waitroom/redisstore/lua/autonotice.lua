-- autonotice.lua: AutopilotNotices.AutopilotNotice, whether this call
-- sends the webhook room.autopilot_changed (waitroom/autopilot_notice.go
-- holds the same rule in Go, for the memory store: NoticeRecord.Note).
-- KEYS[1]: the room's notice hash. ARGV: the limit in effect, the gap
-- (microseconds), 1 to record the limit as sent without a send (a pin).
-- Reply: {1 to send, the limit last sent before, the limit last sent now}.
-- The hash: sent, up and down (when a rise, a fall was last sent).

local K_NOTICE = KEYS[1]
local LIMIT, GAP, QUIETLY = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]) == 1

local now = clock()
local h = redis.call('HMGET', K_NOTICE, 'sent', 'up', 'down')
local sent, up, down = tonumber(h[1]), tonumber(h[2]) or 0, tonumber(h[3]) or 0
local from = sent or 0
local send = 0
if not sent or QUIETLY then
  sent = LIMIT
elseif LIMIT ~= sent then
  local last = up
  if LIMIT < sent then last = down end
  if last == 0 or now - last >= GAP or now < last then
    send = 1
    if LIMIT < sent then down = now else up = now end
    sent = LIMIT
  end
end
redis.call('HSET', K_NOTICE, 'sent', sent, 'up', up, 'down', down)
-- Unused for a day, the record goes, as the autopilot's own.
redis.call('PEXPIRE', K_NOTICE, 86400000)
return {send, from, sent}
