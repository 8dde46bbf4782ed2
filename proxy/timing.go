package proxy

import (
	"net/http"
	"time"
)

// firstByte is when the recorder's first byte of a response (its status
// line) was handed on: for a forwarded request, when the upstream's
// answer began, or the gateway's own 502 or 504.
type firstByte struct {
	start, at time.Time
}

// mark notes the first byte, once.
func (f *firstByte) mark() {
	if f.at.IsZero() {
		f.at = time.Now()
	}
}

// since is the time to the first byte; the whole time when none was sent.
func (f *firstByte) since() time.Duration {
	if f.at.IsZero() {
		return time.Since(f.start)
	}
	return f.at.Sub(f.start)
}

// timed reports a finished request to Options.OnFirstByte.
func (u *Upstream) timed(rec *recorder) {
	if u.opt.OnFirstByte != nil {
		u.opt.OnFirstByte(rec.in, rec.code(), rec.first.since())
	}
}

// OnFirstByteFunc is the type of Options.OnFirstByte.
type OnFirstByteFunc = func(r *http.Request, status int, firstByte time.Duration)
