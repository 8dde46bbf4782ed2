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
	decideScript   = loadScript("decide.lua", true)
	admitScript    = loadScript("admit.lua", true)
	releaseScript  = loadScript("release.lua", true)
	overrideScript = loadScript("override.lua", true)
	shuffleScript  = loadScript("shuffle.lua", true)
	statsScript    = loadScript("stats.lua", false)
)

// commonMark is the line where a script wants common.lua rather than in
// front of it.
const commonMark = "--[[ common.lua ]]"

// loadScript reads an embedded script. Scripts that change a room get
// prelude.lua (key names, units, the clock) in front, then common.lua (the
// helpers) in front too, or at the script's commonMark line: Redis runs a
// script's whole chunk on every call, so decide.lua answers polls before
// the helpers are defined and a poll does not pay for creating them. They
// are text, not separate scripts, because Redis runs one script per call
// and each state change must be one.
func loadScript(name string, shared bool) script {
	src := mustRead(name)
	if shared {
		common := mustRead("common.lua")
		if strings.Contains(src, commonMark) {
			src = strings.Replace(src, commonMark, common, 1)
		} else {
			src = common + "\n" + src
		}
		src = mustRead("prelude.lua") + "\n" + src
	}
	return script{name: name, src: src, Script: redis.NewScript(src)}
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
func replyInts(name string, reply any, dst []int64) error {
	arr, ok := reply.([]any)
	if !ok {
		return fmt.Errorf("%s: reply: want an array of %d integers, got %s", name, len(dst), typeName(reply))
	}
	if len(arr) != len(dst) {
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
