package pattern

import "strings"

// MaxValueLen bounds a parameter's value, in bytes.
const MaxValueLen = 64

// Param is one parameter as matched or filled: its name and its value.
type Param struct{ Name, Value string }

// IsTemplate reports a name that holds a parameter, "event-{id}".
func IsTemplate(s string) bool { return strings.IndexByte(s, '{') >= 0 }

// ValueByte reports a byte a value may hold: a-z, 0-9, '-' or '_'. Upper
// case is not one: a path's value is lowered before it is checked, so a
// site that serves /events/ABC/ and /events/abc/ alike gets one room.
func ValueByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// ValidValue reports a value a room name may carry: 1 to MaxValueLen
// bytes, each a ValueByte.
func ValidValue(v string) bool {
	if len(v) == 0 || len(v) > MaxValueLen {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !ValueByte(v[i]) {
			return false
		}
	}
	return true
}

// ValidName reports a parameter's name: a lower-case letter, then
// lower-case letters, digits or '_'.
func ValidName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// valueRun is how many bytes at the start of s could be a value: the
// ValueBytes there, at most MaxValueLen.
func valueRun(s string) int {
	n := 0
	for n < len(s) && n < MaxValueLen && ValueByte(s[n]) {
		n++
	}
	return n
}

// lower returns s in ASCII lower case, s itself when it has no upper case.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// hasPrefixFold reports s starting with low (lower case already), ignoring
// ASCII case only: Unicode folding would let "\u212a" stand for "k".
func hasPrefixFold(s, low string) bool {
	if len(s) < len(low) {
		return false
	}
	for i := 0; i < len(low); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != low[i] {
			return false
		}
	}
	return true
}
