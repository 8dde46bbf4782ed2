package waitroom

import (
	"context"
	"net/http"
	"time"

	"go.uber.org/zap"
)

// KeepAlive keeps the session of an admitted request alive while a
// long-lived connection (a WebSocket) it started stays open: an open
// socket is an active visitor even if it sends no new requests. It returns
// the func to call when the connection ends.
func (g *Gate) KeepAlive(r *http.Request) (stop func()) {
	room, id := r.Header.Get(RoomHeader), r.Header.Get(VisitorHeader)
	lr := g.rooms.get(room)
	if lr == nil || id == "" {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	done := make(chan struct{})
	go func() {
		defer close(done)
		every := max(lr.limits().RenewInterval(), 10*time.Millisecond)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := g.rooms.store.Decide(ctx, room, lr.limits(), Visitor{ID: id}, JoinNone); err != nil && ctx.Err() == nil {
					g.log.Warn("renewing a websocket session", zap.String(fieldRoom, room), zap.String(fieldVisitor, id), zap.Error(err))
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
