package redisstore

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

func TestAssemble_PutsEachPartWhereItSays(t *testing.T) {
	t.Parallel()
	const prelude, common = "-- P\n", "-- C\n"
	tests := []struct{ body, want string }{
		{"-- B\n", "-- P\n\n-- C\n\n-- B\n"},
		{"a\n--[[ common.lua ]] -- here\nb\n", "-- P\n\na\n-- C\n -- here\nb\n"},
		{"#!lua flags=no-writes\n-- B\n", "#!lua flags=no-writes\n-- P\n\n-- B\n"},
	}
	for i, tc := range tests {
		c := common
		if strings.HasPrefix(tc.body, "#!") {
			c = "" // the read-only snapshot gets the prelude only
		}
		if got := assemble(prelude, c, tc.body); got != tc.want {
			t.Errorf("case %d: assembled\n%q\nwant\n%q", i, got, tc.want)
		}
	}
}

// The numbers prelude.lua spells that Go spells too must agree, or a reply
// would be misread and an argument taken for another.
func TestScripts_ConstantsAgreeWithGo(t *testing.T) {
	t.Parallel()
	lua := luaConstants(t, mustRead("prelude.lua"))
	var c cache
	args := c.limitArgs(waitroom.Limits{MaxActive: 7, SessionTTL: time.Minute, AbandonAfter: time.Minute})
	want := map[string]int{
		"S_NONE": replyNone, "S_WAITING": replyWaiting, "S_ADMITTED": replyAdmitted,
		"LIMIT_ARGS": len(args),
		// The position in ARGV (from 1) of what limitArgs puts there.
		"A_MAX": 3, "A_TTL": 7, "A_RANDOM": 11, "A_PLACE_WITHIN": 18, "A_OVERRIDE_TTL": 19, "A_CLIENT_QUIET": len(args),
	}
	if args[2] != int64(7) || args[6] != time.Minute.Microseconds() {
		t.Fatalf("limitArgs moved max_active or session_ttl: %v", args)
	}
	if args[17] != time.Minute.Microseconds() || args[18] != metaTTL.Milliseconds() ||
		args[len(args)-1] != (20*time.Second).Microseconds() {
		t.Fatalf("limitArgs moved place_within, the override's lifetime or the client quiet time: %v", args)
	}
	for name, w := range want {
		if got, ok := lua[name]; !ok || got != w {
			t.Errorf("prelude.lua %s = %d (found %v), Go says %d", name, got, ok, w)
		}
	}
	// Each KEYS[n] prelude.lua names is the key keys.go puts at n.
	def := regexp.MustCompile(`(K_[A-Z]+)\b`)
	at := regexp.MustCompile(`KEYS\[(\d+)\]`)
	for _, line := range strings.Split(mustRead("prelude.lua"), "\n") {
		if !strings.HasPrefix(line, "local K_") {
			continue
		}
		lhs, rhs, _ := strings.Cut(line, "=")
		names, idx := def.FindAllString(lhs, -1), at.FindAllStringSubmatch(rhs, -1)
		for i, name := range names {
			n, _ := strconv.Atoi(idx[i][1])
			if want := "K_" + strings.ToUpper(keyNames[n-1]); name != want {
				t.Errorf("prelude.lua names KEYS[%d] %s; keys.go puts %q there", n, name, keyNames[n-1])
			}
		}
	}
	if keyNames[overrideKey] != "override" {
		t.Errorf("overrideKey points at %q", keyNames[overrideKey])
	}
}

// luaConstants reads `local A, B = 1, 2` lines of whole numbers.
func luaConstants(t *testing.T, src string) map[string]int {
	t.Helper()
	out := map[string]int{}
	line := regexp.MustCompile(`(?m)^local ([A-Z_, ]+) = ([0-9, ]+)$`)
	for _, m := range line.FindAllStringSubmatch(src, -1) {
		names, vals := strings.Split(m[1], ", "), strings.Split(m[2], ", ")
		if len(names) != len(vals) {
			t.Fatalf("prelude.lua: %q has %d names for %d values", m[0], len(names), len(vals))
		}
		for i, n := range names {
			v, err := strconv.Atoi(strings.TrimSpace(vals[i]))
			if err != nil {
				t.Fatalf("prelude.lua: %s = %q", n, vals[i])
			}
			out[strings.TrimSpace(n)] = v
		}
	}
	return out
}

// TestScripts_QuotaSpanCoversTheChallengeBurst: a join quota's time runs
// at most ChallengeJoinFactor periods ahead of now (a room with a
// challenge), so the quota hashes' generations (quota.lua, QUOTA_SPAN
// periods) must be at least that long, or a time would be dropped while
// it still counts.
func TestScripts_QuotaSpanCoversTheChallengeBurst(t *testing.T) {
	t.Parallel()
	if got := luaConstants(t, mustRead("quota.lua"))["QUOTA_SPAN"]; got < waitroom.ChallengeJoinFactor {
		t.Fatalf("quota.lua QUOTA_SPAN = %d, want at least waitroom.ChallengeJoinFactor (%d)", got, waitroom.ChallengeJoinFactor)
	}
}
