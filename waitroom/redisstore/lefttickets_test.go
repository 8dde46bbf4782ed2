package redisstore

import (
	"testing"

	"github.com/waitroom/waitroom/waitroom"
)

// release.lua keeps as many tickets of those who left as Stats holds.
func TestScripts_LeftTicketsAgreeWithGo(t *testing.T) {
	t.Parallel()
	if got := luaConstants(t, mustRead("release.lua"))["LEFT_TICKETS"]; got != waitroom.MaxLeftTickets {
		t.Fatalf("release.lua LEFT_TICKETS = %d, Go says %d", got, waitroom.MaxLeftTickets)
	}
}
