// Package conf is the vocabulary every configuration section shares: a list
// of problems by key path, and values with units. It imports nothing of the
// project, so each package that owns a section (proxy included, which must
// not import waitroom or web) builds its section with the same words.
//
// A section's Build returns every problem at once, each as "key: rule, got
// value" with keys relative to the section; the caller nests them under its
// own key ("rooms.concert."), so a file's problems read as one list:
//
//	rooms.concert.max_active: must be >= 0, got -5
//	cookie.hash_keys[0]: must decode to 32 or 64 bytes, got 12
//
// Each problem keeps its key and Kind apart from its words (Split), so a
// caller sorts problems by key and answers by kind, never by reading text.
package conf

import (
	"errors"
	"fmt"
)

// Problems collects a section's problems. The zero value is empty and ready.
type Problems struct{ list []error }

// Add records one problem of key, worded by format and args, of kind
// Invalid.
func (p *Problems) Add(key, format string, args ...any) {
	p.add(Invalid, key, format, args...)
}

// Conflict records one problem of key, worded by format and args, of kind
// Conflict: the value collides with another in service.
func (p *Problems) Conflict(key, format string, args ...any) {
	p.add(Conflict, key, format, args...)
}

func (p *Problems) add(kind Kind, key, format string, args ...any) {
	e := fmt.Errorf(format, args...)
	p.list = append(p.list, Problem{Message: e.Error(), Kind: kind, key: key, err: e})
}

// Nest records every problem of err (one, or several joined) under prefix,
// which ends in "." or names an element ("routes[2]."), keeping each
// problem's Kind. A nil err adds nothing.
func (p *Problems) Nest(prefix string, err error) {
	for _, e := range Split(err) {
		e.key = prefix + e.key
		p.list = append(p.list, e)
	}
}

// Err joins the problems; nil when there are none. Split recovers them.
func (p *Problems) Err() error { return errors.Join(p.list...) }

// Len counts the problems so far.
func (p *Problems) Len() int { return len(p.list) }

// Lines is Split as text, each line with prefix in front.
func Lines(prefix string, err error) []string {
	var out []string
	for _, e := range Split(err) {
		out = append(out, prefix+e.Error())
	}
	return out
}
