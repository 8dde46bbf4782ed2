package redisstore

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
)

func TestReplyInts_MalformedRepliesNameTheScript(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply any
		want  string // the whole error; "" for none
	}{
		{"three integers", []any{int64(1), int64(0), int64(2)}, ""},
		{"not an array", "OK", "admit.lua: reply: want an array of 3 integers, got string"},
		{"nil", nil, "admit.lua: reply: want an array of 3 integers, got nil"},
		{"too short", []any{int64(1), int64(2)}, "admit.lua: reply: want 3 elements, got 2"},
		{"too long", []any{int64(1), int64(2), int64(3), int64(4)}, "admit.lua: reply: want 3 elements, got 4"},
		{"a string", []any{"1", int64(0), int64(0)}, "admit.lua: reply[1]: want int64, got string"},
		{"a nil", []any{int64(1), nil, int64(0)}, "admit.lua: reply[2]: want int64, got nil"},
		{"a nested array", []any{int64(1), int64(0), []any{}}, "admit.lua: reply[3]: want int64, got array"},
		{"a float", []any{int64(1), 0.5, int64(0)}, "admit.lua: reply[2]: want int64, got float64"},
		{"an error", []any{int64(1), int64(0), redis.ErrNoScript}, "admit.lua: reply[3]: want int64, got error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var dst [3]int64
			err := replyInts("admit.lua", tc.reply, dst[:])
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestDecision_ReadsEveryState(t *testing.T) {
	t.Parallel()
	until := time.UnixMicro(1_795_000_000_123_456)
	tests := []struct {
		reply [decideReply]int64
		want  waitroom.Decision
		err   string
	}{
		{[decideReply]int64{0, 0, 0, 0, 0, 0, 0, 0, 0}, waitroom.Decision{}, ""},
		{[decideReply]int64{1, 42, 3, 9, 0, flagJoined + flagPlaced, 0, 0, 2}, waitroom.Decision{State: waitroom.StateWaiting, Ticket: 42, Position: 3, Line: 9, Joined: true, Placed: true, Recent: 2}, ""},
		{[decideReply]int64{1, 43, 10, 10, 0, flagJoined, 0, 0, 0}, waitroom.Decision{State: waitroom.StateWaiting, Ticket: 43, Position: 10, Line: 10, Joined: true}, ""},
		{[decideReply]int64{1, 44, 120, 500, 0, flagPlaced, 0, 0, 0, 1_795_000_000_000_000, 300, 12, 4}, waitroom.Decision{State: waitroom.StateWaiting, Ticket: 44, Position: 120, Line: 500, Placed: true,
			Progress: waitroom.Progress{Epoch: 1_795_000_000_000_000, Admitted: 300, Departed: 12, Pending: 4}}, ""},
		{[decideReply]int64{2, 0, 0, 0, until.UnixMicro(), flagPlaced + flagRenewed, 0, 0, 0}, waitroom.Decision{State: waitroom.StateAdmitted, Until: until, Renewed: true, Placed: true}, ""},
		{[decideReply]int64{0, 0, 0, 0, 0, 0, refusedQuota, 1_500_000, 31}, waitroom.Decision{Refusal: waitroom.RefusedQuota, RetryAfter: 1500 * time.Millisecond, Recent: 31}, ""},
		{[decideReply]int64{1, 5, 1, 3, 0, flagJoined + flagPlaced + flagBackInLine + flagGrace, 0, 0, 0}, waitroom.Decision{State: waitroom.StateWaiting, Ticket: 5, Position: 1, Line: 3, Joined: true, Placed: true, Restored: waitroom.RestoreWaiting, GraceStarted: true}, ""},
		{[decideReply]int64{7}, waitroom.Decision{}, "decide.lua: reply[1]: want a state 0, 1 or 2, got 7"},
		{[decideReply]int64{0, 0, 0, 0, 0, 0, 9}, waitroom.Decision{}, "decide.lua: reply[7]: want a refusal from 0 to 5, got 9"},
	}
	for _, tc := range tests {
		d, err := decision(tc.reply)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("reply %v: error %v, want %q", tc.reply, err, tc.err)
			}
			continue
		}
		if !d.Until.Equal(tc.want.Until) {
			t.Errorf("reply %v: until %v, want %v", tc.reply, d.Until, tc.want.Until)
		}
		d.Until, tc.want.Until = time.Time{}, time.Time{}
		if err != nil || d != tc.want {
			t.Errorf("reply %v: %+v, %v; want %+v", tc.reply, d, err, tc.want)
		}
	}
}

func TestUnavailableError_IsErrUnavailableAndKeepsTheCause(t *testing.T) {
	t.Parallel()
	cause := errors.New("dial unix /x: connect: connection refused")
	err := unavailable(cause)
	if !errors.Is(err, waitroom.ErrUnavailable) || !errors.Is(err, cause) || errors.Is(err, waitroom.ErrClosed) {
		t.Errorf("errors.Is: unavailable %t, cause %t, closed %t", errors.Is(err, waitroom.ErrUnavailable), errors.Is(err, cause), errors.Is(err, waitroom.ErrClosed))
	}
	if err.Error() != cause.Error() {
		t.Errorf("message %q, want the cause's alone", err)
	}
}

// TestScripts_ShareCommonAndKeepTheirVerb: each script that changes a room
// names the Store method that runs it (the shared files go in front when it
// is loaded, see TestScripts_PreludeFirstCommonOnce); stats.lua starts with
// its flags line, which Redis reads only as the first line.
func TestScripts_ShareCommonAndKeepTheirVerb(t *testing.T) {
	t.Parallel()
	for _, sc := range []script{decideScript, admitScript, releaseScript, overrideScript, useRoomScript, definitionScript} {
		src := mustRead(sc.name)
		if !strings.HasPrefix(src, "-- "+sc.name+": Store.") {
			t.Errorf("%s does not say which Store method runs it", sc.name)
		}
	}
	if src := mustRead("stats.lua"); !strings.HasPrefix(src, "#!lua flags=no-writes\n") {
		t.Errorf("stats.lua must start with its flags line")
	}
}

// TestScripts_PreludeFirstCommonOnce: every script that changes a room
// runs prelude.lua first and common.lua once, where the script asked for
// it if it did; decide.lua asks after its hot paths.
func TestScripts_PreludeFirstCommonOnce(t *testing.T) {
	t.Parallel()
	prelude, common := mustRead("prelude.lua"), helpers()
	for _, sc := range []script{decideScript, admitScript, releaseScript, overrideScript, shuffleScript} {
		if !strings.HasPrefix(sc.src, prelude) || strings.Count(sc.src, common) != 1 || strings.Contains(sc.src, commonMark) ||
			strings.Contains(sc.src, quotaMark) || !strings.Contains(sc.src, "local function charge(") {
			t.Errorf("%s: want prelude.lua first, common.lua once with quota.lua in it, no %s or %s left", sc.name, commonMark, quotaMark)
		}
	}
	if at, poll := strings.Index(decideScript.src, common), strings.Index(decideScript.src, "redis.call('ZRANK'"); at < poll {
		t.Errorf("decide.lua defines the helpers at byte %d, before it answers a poll at byte %d", at, poll)
	}
}

func TestParseOverride_ErrorsNameKeyAndField(t *testing.T) {
	t.Parallel()
	const key = "{wr:concert}:override"
	tests := []struct {
		name string
		hash map[string]string
		want string // the whole error; "" for none
	}{
		{"none", nil, ""},
		{"every field", map[string]string{"max_active": "7", "admit_rate": "unlimited", "mode": "random", "message": "", "changed": "1795000000000000"}, ""},
		{"max_active", map[string]string{"max_active": "-1", "changed": "1"}, key + `: max_active: want a whole number >= 0, got "-1"`},
		{"admit_rate", map[string]string{"admit_rate": "300 per minute", "changed": "1"}, key + `: admit_rate: want "<n>/s", "<n>/m", "<n>/h" or "unlimited", got "300 per minute"`},
		{"mode", map[string]string{"mode": "", "changed": "1"}, key + `: mode: want "fifo", "random", "passthrough", "reject" or "paused", got ""`},
		{"changed missing", map[string]string{"mode": "fifo"}, key + ": changed: missing: override.lua always writes it"},
		{"changed", map[string]string{"changed": "soon"}, key + `: changed: want microseconds since the epoch, got "soon"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o, err := parseOverride(key, tc.hash)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("error %v, want %q", err, tc.want)
			case tc.name == "every field" && (*o.MaxActive != 7 || !o.AdmitRate.IsUnlimited() || o.Mode != waitroom.ModeRandom ||
				o.Message == nil || *o.Message != "" || o.Changed.UnixMicro() != 1795000000000000):
				t.Errorf("parsed %+v", o)
			}
		})
	}
}

func TestOverrideArgs_SpellTheRate(t *testing.T) {
	t.Parallel()
	none, rate, msg := 0, waitroom.Rate{N: 300, Per: time.Minute}, "hi"
	got := fmt.Sprint(overrideArgs(waitroom.Override{MaxActive: &none, AdmitRate: &rate, Mode: waitroom.ModeReject, Message: &msg}))
	if want := "[2592000000 set max_active 0 admit_rate 300/m mode reject message hi]"; got != want {
		t.Errorf("overrideArgs = %s, want %s", got, want)
	}
	if got := fmt.Sprint(overrideArgs(waitroom.Override{})); got != "[2592000000 set]" {
		t.Errorf("overrideArgs of the zero Override = %s, want only the lifetime and the verb", got)
	}
}
