package waitroom

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
)

// Note is what the gate tells the access log about a request: the room,
// what it decided, and a hash of who asked. The front door puts one in a
// request's context (WithNote) when it keeps an access log; the gate fills
// it, and nothing reads it back on the request path.
type Note struct {
	Room     string
	Decision string // admitted, joined, queued, hold, refused, preflight, poll, left, error
	Visitor  string // VisitorHash of the visitor id; "" for none
}

type noteKey struct{}

// WithNote returns ctx carrying n for the gate to fill.
func WithNote(ctx context.Context, n *Note) context.Context {
	return context.WithValue(ctx, noteKey{}, n)
}

// note records on the request's Note, when it has one.
func note(ctx context.Context, room, decision, visitor string) {
	n, ok := ctx.Value(noteKey{}).(*Note)
	if !ok {
		return
	}
	n.Room, n.Decision = room, decision
	if visitor != "" {
		n.Visitor = VisitorHash(visitor)
	}
}

// VisitorHash is a short, one-way name of a visitor id for logs: the same
// visitor reads the same across lines and instances, and the id (which a
// ticket carries) cannot be read back from it.
func VisitorHash(id string) string {
	sum := sha256.Sum256([]byte("waitroom visitor\x00" + id))
	return hex.EncodeToString(sum[:8])
}
