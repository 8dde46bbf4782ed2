package redisstore

import (
	"embed"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// script is one Lua script, the file it came from, which errors name, and
// its source as Redis runs it.
type script struct {
	name string
	src  string
	*redis.Script
}

// The scripts, one per Store method that changes a room (admit.lua serves
// Admit and AdmitN, override.lua SetOverride and ClearOverride), plus the
// read-only snapshot. Each is wrapped once; Script.Run sends EVALSHA and
// falls back to EVAL when Redis does not know the script yet (first use, or
// after a restart or SCRIPT FLUSH), so a script crosses the wire once per
// server.
var (
	decideScript   = loadScript("decide.lua", withHelpers)
	admitScript    = loadScript("admit.lua", withHelpers)
	releaseScript  = loadScript("release.lua", withHelpers)
	overrideScript = loadScript("override.lua", withHelpers)
	shuffleScript  = loadScript("shuffle.lua", withHelpers)
	statsScript    = loadScript("stats.lua", preludeOnly)
	touchScript    = loadScript("touch.lua", preludeOnly)
	reserveScript  = loadScript("reserve.lua", withHelpers)
	placeScript    = loadScript("place.lua", withHelpers)
)

// What a script is assembled from, besides its own body.
const (
	preludeOnly = false // prelude.lua: key names, ARGV layout, units, the clock
	withHelpers = true  // prelude.lua, then common.lua's helpers
)

// commonMark is the line of a script that wants common.lua there rather
// than in front of its body.
const commonMark = "--[[ common.lua ]]"

// quotaMark is common.lua's line where quota.lua's helpers go.
const quotaMark = "--[[ quota.lua ]]"

// helpers is common.lua with quota.lua spliced in at its quotaMark line:
// one text of helpers, in the order they were always defined, kept in two
// files so that neither grows past what a reader holds at once.
func helpers() string {
	common, quota := mustRead("common.lua"), mustRead("quota.lua")
	at := strings.Index(common, quotaMark)
	if at < 0 {
		panic("redisstore: common.lua has no " + quotaMark + " line")
	}
	end := at + strings.IndexByte(common[at:], '\n')
	return common[:at] + quota + common[end+1:]
}

// loadScript reads an embedded script and assembles it (see assemble).
func loadScript(name string, withCommon bool) script {
	common := ""
	if withCommon {
		common = helpers()
	}
	src := assemble(mustRead("prelude.lua"), common, mustRead(name))
	return script{name: name, src: src, Script: redis.NewScript(src)}
}

// assemble makes the source Redis runs from three texts: the prelude first
// (after the body's "#!lua" flags line, which Redis wants first), then the
// helpers, then the body; or the helpers at the body's commonMark line,
// which is how decide.lua answers a poll before the helpers are even
// defined (Redis runs a script's whole chunk on every call). They are
// text, not separate scripts, because Redis runs one script per call and
// each state change must be one.
func assemble(prelude, common, body string) string {
	flags := ""
	if strings.HasPrefix(body, "#!lua") {
		line, rest, _ := strings.Cut(body, "\n")
		flags, body = line+"\n", rest
	}
	if common != "" {
		if strings.Contains(body, commonMark) {
			body = strings.Replace(body, commonMark, common, 1)
		} else {
			body = common + "\n" + body
		}
	}
	return flags + prelude + "\n" + body
}

func mustRead(name string) string {
	b, err := luaFiles.ReadFile("lua/" + name)
	if err != nil {
		panic(fmt.Sprintf("redisstore: embedded %s: %v", name, err)) // a build without the file is broken
	}
	return string(b)
}

// replyInts reads a script's reply, an array of len(dst) integers, into
// dst. Scripts return only integers (Redis truncates Lua numbers to
// integers, so anything fractional would travel as a string); anything else
// means the script and this code disagree, and the error names the script
// and the element, counting from 1 as the Lua table does.
// decideShort is the length of decide.lua's replies without progress;
// statsShort of stats.lua's without the line's first tickets and the
// tickets of those who left (its last element counts the first tickets).
const (
	decideShort = 9
	statsShort  = 20
)

func replyInts(name string, reply any, dst []int64) error {
	arr, ok := reply.([]any)
	if !ok {
		return fmt.Errorf("%s: reply: want an array of %d integers, got %s", name, len(dst), typeName(reply))
	}
	// decide.lua's reply has a tail only some answers carry (decideReply);
	// every other script's has one length.
	// stats.lua's ends with up to waitroom.MaxHead and
	// waitroom.MaxLeftTickets tickets.
	short := len(arr) == decideShort && name == decideScript.name ||
		len(arr) >= statsShort && len(arr) < len(dst) && name == statsScript.name
	if len(arr) != len(dst) && !short {
		return fmt.Errorf("%s: reply: want %d elements, got %d", name, len(dst), len(arr))
	}
	for i, v := range arr {
		n, ok := v.(int64)
		if !ok {
			return fmt.Errorf("%s: reply[%d]: want int64, got %s", name, i+1, typeName(v))
		}
		dst[i] = n
	}
	return nil
}

// typeName spells a reply's Go type the way Redis users think of it.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "nil"
	case string:
		return "string"
	case []any:
		return "array"
	case redis.Error:
		return "error"
	default:
		return strings.TrimPrefix(fmt.Sprintf("%T", v), "*")
	}
}
