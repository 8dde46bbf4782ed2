package waitroom

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"time"

	"go.uber.org/zap"
)

// isUpgrade reports a request that asks to switch protocols (a WebSocket),
// by the rule net/http's ReverseProxy follows: Connection lists "upgrade"
// and Upgrade is set.
func isUpgrade(h http.Header) bool {
	return hasToken(h["Connection"], "upgrade") && h.Get("Upgrade") != ""
}

// serveSocket proxies an admitted visitor's upgrade request (a WebSocket)
// as a socket of its session: counted against the room's max_sockets in
// the store, and closed within a tick of the session's end (a release by
// the site, the admin API or /leave, an expiry, session_max, the room in
// reject mode or removed by a reload). Paused keeps it open: the people
// inside stay. While it is open it keeps the session alive, as its
// requests would. Cancelling the request's context is what closes it:
// ReverseProxy then closes the upstream's side and the client's.
func (g *Gate) serveSocket(w http.ResponseWriter, r *http.Request, lr *liveRoom, v Visitor, next http.Handler) {
	id := newSocketID()
	err := g.rooms.store.Socket(r.Context(), lr.name, lr.limits(), v.ID, id, SocketOpen, lr.room().Tick)
	switch {
	case errors.Is(err, ErrTooManySockets):
		g.rooms.obs.SessionRefused(lr.label(), "sockets")
		w.Header().Set("Retry-After", "5")
		g.resp.Error(w, r, http.StatusTooManyRequests)
		return
	case errors.Is(err, ErrNotFound):
		// The session ended between the decision and now (another
		// instance released it): no socket for it.
		g.resp.Error(w, r, http.StatusForbidden)
		return
	case err != nil:
		// The store is failing: an admitted visitor goes through as
		// store.on_error lets it; the holder keeps asking.
		g.log.Debug("opening a socket while the store fails", zap.String(fieldRoom, lr.name), zap.Error(err))
	}
	ctx, end := context.WithCancel(r.Context())
	defer end()
	stop := g.holdSocket(ctx, end, lr, v, id)
	defer stop()
	next.ServeHTTP(w, r.WithContext(ctx))
}

// holdSocket renews the socket every tick and ends it (end) once its
// session does; it renews the session as a request would, every renew
// interval. It returns the func that stops it and forgets the socket.
func (g *Gate) holdSocket(ctx context.Context, end context.CancelFunc, lr *liveRoom, v Visitor, id string) (stop func()) {
	hold, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	name := lr.name
	go func() {
		defer close(done)
		tick := max(lr.room().Tick, 10*time.Millisecond)
		t := time.NewTicker(tick)
		defer t.Stop()
		renewed := time.Now()
		for {
			select {
			case <-hold.Done():
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if why := g.socketEnds(hold, lr, v, id, tick, &renewed); why != "" {
				g.log.Debug("closing a socket: its session ended", zap.String(fieldRoom, name), zap.String(fieldVisitor, v.ID), zap.String("why", why))
				end()
				return
			}
		}
	}()
	return func() {
		cancel()
		<-done
		// Forget the socket even if the visitor left; a store that
		// fails now lets it go stale instead.
		c, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = g.rooms.store.Socket(c, name, lr.limits(), v.ID, id, SocketClose, lr.room().Tick)
	}
}

// socketEnds says why a socket must close now, "" while it may stay.
func (g *Gate) socketEnds(ctx context.Context, lr *liveRoom, v Visitor, id string, tick time.Duration, renewed *time.Time) string {
	if g.rooms.get(lr.name) == nil {
		return "room removed"
	}
	// A room being deleted is closed to everyone else, but the people
	// inside finish their sessions, sockets included (Room.Closing).
	if lr.eff.Load().Mode == ModeReject && !lr.room().Closing {
		return "room closed"
	}
	lim := lr.limits()
	err := g.rooms.store.Socket(ctx, lr.name, lim, v.ID, id, SocketHold, tick)
	switch {
	case errors.Is(err, ErrNotFound):
		return "session over"
	case err != nil:
		return "" // an outage closes nobody's socket
	}
	if time.Since(*renewed) >= lim.RenewInterval() {
		*renewed = time.Now()
		d, err := g.rooms.store.Decide(ctx, lr.name, lim, v, JoinNone)
		if err == nil && d.State != StateAdmitted {
			return "session over"
		}
	}
	return ""
}

// newSocketID is 96 random bits, enough that two sockets of one session
// never share an id.
func newSocketID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
