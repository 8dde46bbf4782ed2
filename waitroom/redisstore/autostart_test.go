package redisstore

import "testing"

// autostart.lua reads the room's join count and line by these indexes.
func TestAutostart_Keys(t *testing.T) {
	t.Parallel()
	if keyNames[statsKey] != "stats" || keyNames[queueKey] != "queue" {
		t.Fatalf("statsKey names %q, queueKey %q", keyNames[statsKey], keyNames[queueKey])
	}
}
