package waitroom

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/netip"
)

// Scope is the facts of one request, set once where it enters (the
// gateway's outermost handler, the middleware's Handler) and filled as it goes:
// who sent it, where it goes, what became of it. It travels in the
// request's context under one key; the access log reads it when the
// response is done, the pass signer and the upstream's commands read its
// Admission. Like oauth2-proxy's RequestScope, it is the one place these
// facts live, so the metrics and the logs cannot tell two stories.
type Scope struct {
	// Client is the client's address as the front door believed it
	// (proxy.ClientAddr); invalid when unknown, and the gate then reads
	// the peer.
	Client netip.Addr
	// Room is the room of the request's route ("" for none), Upstream
	// the upstream that serves it.
	Room     string
	Upstream string
	// Outcome is what became of the request (Record); "" until known.
	Outcome Outcome
	// Visitor is VisitorHash of the visitor id; "" for none.
	Visitor string
	// Admission is set for a request the gate let inside; nil otherwise.
	Admission *Admission
}

type scopeKey struct{}

// WithScope returns ctx carrying sc.
func WithScope(ctx context.Context, sc *Scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, sc)
}

// ScopeOf is the scope ctx carries; nil for none.
func ScopeOf(ctx context.Context) *Scope {
	sc, _ := ctx.Value(scopeKey{}).(*Scope)
	return sc
}

// Scoped returns r with a scope: its own when it has one, else a new
// one, so whoever enters first sets it and the rest fill it.
func Scoped(r *http.Request) (*http.Request, *Scope) {
	if sc := ScopeOf(r.Context()); sc != nil {
		return r, sc
	}
	sc := &Scope{}
	return r.WithContext(WithScope(r.Context(), sc)), sc
}

// Record tells what became of r, once: to the metrics (obs, under the
// room's label, which is a template's name for a filled room) and to r's
// scope, for the access log. visitor is the visitor id, "" for none.
func Record(r *http.Request, obs Observer, label, room string, o Outcome, visitor string) {
	obs.Request(label, o)
	if w, ok := obs.(Watcher); ok && visitor != "" {
		w.Present(label, visitor)
	}
	sc := ScopeOf(r.Context())
	if sc == nil {
		return
	}
	sc.Room, sc.Outcome = room, o
	if visitor != "" {
		sc.Visitor = VisitorHash(visitor)
	}
}

// VisitorHash is a short, one-way name of a visitor id for logs: the same
// visitor reads the same across lines and instances, and the id (which a
// ticket carries) cannot be read back from it.
func VisitorHash(id string) string {
	sum := sha256.Sum256([]byte("waitroom visitor\x00" + id))
	return hex.EncodeToString(sum[:8])
}
