// Package middleware puts a waiting room in front of an http.Handler
// inside a Go program, with the configuration types of the gateway's file
// and its store, request path and pages: a room, a gate, and the visitor
// endpoints under /.waitroom/.
//
//	room, err := middleware.New(middleware.Options{Name: "concert", Room: cfg})
//	go room.Run(ctx)
//	http.ListenAndServe(":8080", room.Handler(shop))
//
// Several Go processes share one line with the same Redis store
// (redisstore.Open) and the same cookie keys.
package middleware

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/door"
	"github.com/waitroom/waitroom/waitroom/memstore"
	"github.com/waitroom/waitroom/web"
)

// Options are a room's settings, as in the gateway's file.
type Options struct {
	// Name is the room's name (its cookie is waitroom_<name>, with the
	// __Host- prefix when secure and without a domain). Required.
	Name string
	// Room and Page are the room's settings and its waiting page;
	// zero values take the file's defaults (waitroom.DefaultRoom,
	// web.DefaultPage).
	Room *waitroom.RoomConfig
	Page *web.PageConfig
	// Cookie is the ticket cookie; nil takes the defaults with random keys,
	// which lose every place on restart: set keys for production.
	Cookie *waitroom.CookieConfig
	// Store keeps the line; nil is a memory store (one process).
	Store waitroom.Store
	// Log receives what the room does; nil discards.
	Log *zap.Logger
}

// Room is a waiting room in front of handlers. Run moves its line.
type Room struct {
	name  string
	rooms *waitroom.Rooms
	gate  *waitroom.Gate
	pages *web.Pages
	store waitroom.Store
	// router and endpoints are the gateway's, over this one room.
	router    *door.Router
	endpoints *door.Endpoints
	owned     bool
}

// New builds the room; the error lists every problem of its settings.
func New(o Options) (*Room, error) {
	rc, pc, cc := waitroom.DefaultRoom(), web.DefaultPage(), waitroom.DefaultCookie()
	if o.Room != nil {
		rc = *o.Room
	}
	if o.Page != nil {
		pc = *o.Page
	}
	if o.Cookie != nil {
		cc = *o.Cookie
	}
	room, page, err := door.BuildRoom(o.Name, rc, pc)
	if err != nil {
		return nil, fmt.Errorf("room %q: %w", o.Name, err)
	}
	cookie, keys, err := cc.Build()
	if err != nil {
		return nil, fmt.Errorf("cookie: %w", err)
	}
	if len(keys) == 0 {
		keys = []waitroom.KeyPair{waitroom.GenerateKeyPair()}
	}
	tickets, err := waitroom.NewTickets(cookie, keys)
	if err != nil {
		return nil, err
	}
	pages, err := web.New()
	if err != nil {
		return nil, err
	}
	r := &Room{name: o.Name, pages: pages, store: o.Store}
	if r.store == nil {
		r.store, r.owned = memstore.New(), true
	}
	r.rooms = waitroom.NewRooms(waitroom.RoomsOptions{Store: r.store, Log: o.Log})
	r.rooms.Apply(waitroom.RoomsConfig{Rooms: []waitroom.Room{room}})
	r.gate = waitroom.NewGate(waitroom.GateOptions{Rooms: r.rooms, Tickets: tickets,
		Responder: web.NewResponder(pages, map[string]web.Page{o.Name: page}), Log: o.Log})
	r.router = &door.Router{Room: o.Name}
	r.endpoints = &door.Endpoints{Gate: r.gate, Pages: pages}
	return r, nil
}

// Run moves the line (admission ticks) until ctx is done.
func (r *Room) Run(ctx context.Context) error { return r.rooms.Run(ctx) }

// Handler puts the room in front of next: every request goes through the
// gate (next sees the admitted ones, with Waitroom-Visitor and
// Waitroom-Room set), and /.waitroom/ answers the waiting page's polls,
// leave, enter, client.js and the page's own style and scripts.
func (r *Room) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// Only the gate may say who a visitor is.
		req.Header.Del(waitroom.VisitorHeader)
		req.Header.Del(waitroom.RoomHeader)
		req = req.WithContext(waitroom.WithScope(req.Context(), &waitroom.Scope{Room: r.name}))
		// The gateway's decision with one room: the site keeps the path
		// as sent; waitroom's own paths are read cleaned.
		switch d := r.router.Route(req); d.Kind {
		case door.KindRoom:
			r.gate.Serve(w, req, r.name, next)
		case door.KindEndpoint:
			req.URL.Path, req.URL.RawPath = d.Path, ""
			r.endpoints.ServeHTTP(w, req)
		case door.KindBadPath:
			r.pages.Error(w, req, http.StatusBadRequest)
		default:
			// A kind this door does not know refuses: a new check in
			// door.Router must never open the room by default.
			r.pages.Error(w, req, http.StatusNotFound)
		}
	})
}

// Release ends the session of the visitor (the Waitroom-Visitor header
// next received), when the site is done with it: the next in line goes in
// at the next tick. Given the admitted request's context, the session's
// length is measured too. Errors: waitroom.ErrNotFound, the store's.
func (r *Room) Release(ctx context.Context, visitor string) error {
	var entered time.Time
	if sc := waitroom.ScopeOf(ctx); sc != nil && sc.Admission != nil && sc.Admission.Visitor == visitor && sc.Admission.Entered > 0 {
		entered = time.Unix(sc.Admission.Entered, 0)
	}
	return r.rooms.Release(ctx, r.name, visitor, "upstream", entered)
}

// Close closes the store if New made it.
func (r *Room) Close() error {
	if r.owned {
		return r.store.Close()
	}
	return nil
}
