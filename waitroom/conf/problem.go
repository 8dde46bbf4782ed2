package conf

import "fmt"

// Kind says why a value is refused, so a caller can answer by it (the
// admin API picks its status by Kind) without reading the message. The
// kinds run from least to most pressing: a refusal with problems of
// several kinds is of the last one.
type Kind int

const (
	// Invalid is a value wrong in itself: fixing the value fixes it.
	Invalid Kind = iota
	// Conflict is a value fine in itself that collides with something in
	// service, such as a route another room has.
	Conflict
)

func (k Kind) String() string {
	switch k {
	case Invalid:
		return "invalid"
	case Conflict:
		return "conflict"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Problem is one problem: its key path, what is wrong, and its Kind. It
// reads "key: message", as every problem of a file does.
//
// A problem made from another package's error (Nest takes any error)
// knows only the prefixes it was nested under; its Message is that
// error's text, which usually starts with the rest of the key.
type Problem struct {
	// Message says what is wrong: the rule and the value found.
	Message string
	// Kind is Invalid unless the problem was recorded otherwise.
	Kind Kind
	key  string // the prefixes and key as written, "rooms.concert." for a bare one
	bare bool   // made from another package's error: key and Message join without ": "
	err  error  // the error whose text is Message, for errors.Is and errors.As
}

// Key is the problem's key path, "rooms.concert.max_active"; for a
// problem made from another package's error, the path it was nested under.
func (p Problem) Key() string {
	if p.bare && len(p.key) > 0 && p.key[len(p.key)-1] == '.' {
		return p.key[:len(p.key)-1]
	}
	return p.key
}

func (p Problem) Error() string {
	if p.bare {
		return p.key + p.Message
	}
	return p.key + ": " + p.Message
}

// Unwrap is the error the message came from, so that a sentinel named in
// an Add's %w, or carried by a nested error, stays visible to errors.Is.
func (p Problem) Unwrap() error { return p.err }

// Under is p as the section under prefix reported it, with prefix taken
// off its key: Under undoes Nest. It is false when p's key does not start
// with prefix ("rooms.concert.", "routes[2]").
func (p Problem) Under(prefix string) (Problem, bool) {
	if len(p.key) < len(prefix) || p.key[:len(prefix)] != prefix {
		return Problem{}, false
	}
	p.key = p.key[len(prefix):]
	return p, true
}

// Split returns the problems of a joined error one by one, however deeply
// joins nest; a plain error is one problem, nil none. An error that is not
// a Problem becomes one of kind Invalid with its text as the message.
func Split(err error) []Problem {
	if err == nil {
		return nil
	}
	switch e := err.(type) {
	case Problem:
		return []Problem{e}
	case interface{ Unwrap() []error }:
		var out []Problem
		for _, inner := range e.Unwrap() {
			out = append(out, Split(inner)...)
		}
		return out
	}
	return []Problem{{Message: err.Error(), bare: true, err: err}}
}
