package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/pass"
)

// releaseByPass serves POST /.waitroom/release?room=NAME for a site: the
// Waitroom-Pass it was given for a visitor ends that visitor's session, and
// only that one. The site needs no admin token (admin.release_token is the
// other way); a pass never reaches a client, and one that leaked could end
// only the session it names, as leaving would. 404 without passes.
func (g *generation) releaseByPass(rooms *waitroom.Rooms) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if g.signer == nil {
			releaseAnswer(w, http.StatusNotFound, map[string]any{"error": "no admission pass is configured (pass.key_files)"})
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			releaseAnswer(w, http.StatusMethodNotAllowed, map[string]any{"error": "POST only"})
			return
		}
		room := r.URL.Query().Get("room")
		vals := r.Header.Values(proxy.PassHeader)
		if room == "" || len(room) > 256 || len(vals) != 1 {
			releaseAnswer(w, http.StatusBadRequest, map[string]any{"error": "want ?room=NAME and one Waitroom-Pass header"})
			return
		}
		c, err := g.signer.Verify(r.Context(), vals[0], room, time.Now())
		if err != nil {
			// The reason only (expired, room, signature, ...), never the pass.
			releaseAnswer(w, http.StatusForbidden, map[string]any{"error": "the pass is not valid for this room", "reason": pass.Reason(err)})
			return
		}
		visitor := c.Visitor
		if visitor == "" {
			visitor = c.Subject
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
		defer cancel()
		switch err := rooms.Release(ctx, c.Room, visitor, "site", time.Time{}); {
		case errors.Is(err, waitroom.ErrNotFound):
			releaseAnswer(w, http.StatusNotFound, map[string]any{"error": "no session or place for this pass"})
			return
		case err != nil:
			g.log.Warn("releasing with a pass", zap.String("room", c.Room), zap.String("visitor", visitor), zap.Error(err))
			releaseAnswer(w, http.StatusServiceUnavailable, map[string]any{"error": "the store did not answer; try again"})
			return
		}
		_ = rooms.Refresh(ctx, c.Room)
		g.log.Info("released with a pass", zap.String("room", c.Room), zap.String("visitor", visitor))
		releaseAnswer(w, http.StatusOK, map[string]any{"released": true, "room": c.Room})
	})
}

func releaseAnswer(w http.ResponseWriter, status int, v map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
