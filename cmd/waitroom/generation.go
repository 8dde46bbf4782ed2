package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/waitroom/door"
	"github.com/waitroom/waitroom/waitroom/pass"
	"github.com/waitroom/waitroom/waitroom/pattern"
	"github.com/waitroom/waitroom/web"
)

// generation is everything one configuration builds for the request path:
// tickets, pages, the gate, one reverse proxy per upstream, the router and
// the bypass rules. A reload builds a new one completely, then swaps it in
// whole; the store and the rooms' live state (App.rooms) are not part of
// it, so they outlive it.
type generation struct {
	cfg       *Settings
	log       *zap.Logger
	tickets   *waitroom.Tickets
	pages     *web.Pages
	gate      *waitroom.Gate
	upstreams map[string]*proxy.Upstream
	signer    *pass.Signer // nil without pass.key_files
	// passLogged is the app's: the last time a pass could not be made
	// was logged (at most once a minute, whatever the reloads).
	passLogged *atomic.Int64
	router     *door.Router
	endpoints  *door.Endpoints
	// previews seals and opens preview links, with keys derived from the
	// ticket keys: a link outlives a reload that keeps the keys.
	previews *waitroom.Previews
	obs      waitroom.Observer // the app's metrics
}

// build makes the generation for settings s; a is the application it serves.
func (a *App) build(s *Settings) (*generation, error) {
	g := &generation{cfg: s, log: a.log, signer: s.signer, obs: a.metrics, passLogged: &a.passLogged,
		router: &door.Router{Routes: s.router, Bypass: s.bypass}}
	keys := s.keys
	if len(keys) == 0 {
		keys = []waitroom.KeyPair{a.randomKeys()}
	}
	var err error
	if g.tickets, err = waitroom.NewTickets(s.cookie, keys); err != nil {
		return nil, err
	}
	if g.pages, err = web.New(); err != nil {
		return nil, err
	}
	// Challenges are signed with keys derived from the ticket keys, so
	// every instance checks what any issued and a key rotation carries them.
	derived := make([][]byte, len(keys))
	for i, k := range keys {
		derived[i] = challenge.DeriveKey(k.Hash, "challenge")
	}
	challenges, err := challenge.New(derived...)
	if err != nil {
		return nil, fmt.Errorf("building challenge keys: %w", err)
	}
	if g.previews, err = waitroom.PreviewsFromTickets(keys); err != nil {
		return nil, err
	}
	g.gate = waitroom.NewGate(waitroom.GateOptions{
		Rooms: a.rooms, Tickets: g.tickets, Responder: web.NewResponder(g.pages, s.pages),
		RoomOf: g.router.RoomOf, Networks: s.networks, Challenges: challenges, Previews: g.previews,
		Log: a.log.Named("gate"),
	})
	g.endpoints = &door.Endpoints{Gate: g.gate, Pages: g.pages, JWKS: g.jwks(), Auth: http.HandlerFunc(g.auth),
		Release: g.releaseByPass(a.rooms)}
	if err := g.buildUpstreams(a); err != nil {
		return nil, err
	}
	return g, nil
}

// jwks is the key set handler of the generation; 404 without passes.
func (g *generation) jwks() http.Handler {
	if g.signer == nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { g.pages.Error(w, r, http.StatusNotFound) })
	}
	return g.signer.JWKSHandler()
}

func (g *generation) buildUpstreams(a *App) error {
	var drop []string
	if h := g.cfg.bypass.HeaderName(); h != "" {
		drop = append(drop, h) // the bypass secret is for waitroom, not the site
	}
	g.upstreams = make(map[string]*proxy.Upstream, len(g.cfg.upstreams))
	for name, settings := range g.cfg.upstreams {
		up, err := proxy.NewUpstream(name, settings, proxy.Options{
			Log:            a.log.Named("proxy"),
			ErrorPage:      g.pages.Error,
			OnCommand:      g.command(a.rooms),
			OwnCookie:      g.ownCookie(),
			TrustedProxies: g.cfg.forwarders,
			DropHeaders:    drop,
			Pass:           g.pass(name),
			OnDone: func(r *http.Request, status int, d time.Duration) {
				a.metrics.Upstream(name, status, d)
			},
			OnFirstByte: measure(a.rooms),
			Measures:    measures(a.rooms),
		})
		if err != nil {
			return fmt.Errorf("upstreams.%s: %w", name, err)
		}
		g.upstreams[name] = up
		a.metrics.DeclareUpstream(name) // its latency panel reads 0 before the first request
	}
	return nil
}

// close lets go of a generation a reload replaced: requests still on its
// upstreams finish; idle connections are dropped.
func (g *generation) close() {
	for _, up := range g.upstreams {
		_ = up.Close()
	}
}

// ownCookie claims only the cookies of configured rooms and of the rooms
// their templates fill, under both their names (with and without
// __Host-), so a site cookie that happens to start with "waitroom_" still
// reaches the site, and neither of ours does.
func (g *generation) ownCookie() func(string) bool {
	names := make([]string, 0, len(g.cfg.Rooms))
	for room := range g.cfg.Rooms {
		names = append(names, g.tickets.CookieNames(room)...) // __Host- and the old name
	}
	return pattern.NewSet(names...).Has
}

// command acts on what an upstream says in Waitroom-Command about the
// admitted request it answered. "release" ends the visitor's session and
// its ticket too: a finished visitor who comes back joins at the back, and
// its cookie no longer carries an admission that store.on_error: closed
// would honour. "close" (sold out) stops the room issuing tickets on every
// instance; "open" undoes it.
func (g *generation) command(rooms *waitroom.Rooms) func(res *http.Response, cmd string) {
	return func(res *http.Response, cmd string) {
		r := res.Request
		room, visitor := r.Header.Get(waitroom.RoomHeader), r.Header.Get(waitroom.VisitorHeader)
		if room == "" || visitor == "" {
			return // only an admitted request's answer speaks for a room
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
		defer cancel()
		var err error
		switch cmd {
		case "release":
			g.tickets.Expire(res.Header, room)
			err = rooms.Release(ctx, room, visitor, "upstream", sessionStart(r, visitor))
			if errors.Is(err, waitroom.ErrNotFound) {
				err = nil
			}
		case "close":
			err = rooms.CloseRoom(ctx, room)
		case "open":
			err = rooms.OpenRoom(ctx, room)
		default:
			return
		}
		if err != nil {
			g.log.Warn("acting on an upstream command", zap.String("command", cmd), zap.String("room", room), zap.String("visitor", visitor), zap.Error(err))
			return
		}
		g.log.Info("acted on an upstream command", zap.String("command", cmd), zap.String("room", room), zap.String("visitor", visitor))
	}
}

// sessionStart is when the session of the admitted request r (to which the
// upstream answered) began; zero when unknown.
func sessionStart(r *http.Request, visitor string) time.Time {
	sc := waitroom.ScopeOf(r.Context())
	if sc == nil || sc.Admission == nil || sc.Admission.Visitor != visitor || sc.Admission.Entered <= 0 {
		return time.Time{}
	}
	return time.Unix(sc.Admission.Entered, 0)
}

// pass makes the admission pass for requests to the upstream name: for
// that site (aud), the room, the visitor (or its account), its ticket and
// the path the site receives. Signing is cached per session and path by
// the signer, not done per request.
func (g *generation) pass(name string) func(r *http.Request, path string) string {
	if g.signer == nil {
		return nil
	}
	return func(r *http.Request, path string) string {
		sc := waitroom.ScopeOf(r.Context())
		if sc == nil || sc.Admission == nil {
			return "" // through on an outage's word: no admission to vouch for
		}
		a := sc.Admission
		p := pass.Pass{Audience: name, Room: a.Room, Subject: a.Visitor, Ticket: a.Ticket, Path: path}
		if a.Account != "" {
			p.Subject, p.Visitor = a.Account, a.Visitor
		}
		tok, err := g.signer.For(p, time.Now())
		if err != nil {
			// The usual cause is a path so long the pass would pass
			// pass.MaxTokenSize; the request goes on without a pass.
			if g.passLogged == nil || onceAMinute(g.passLogged, time.Now()) {
				g.log.Warn("signing an admission pass (logged at most once a minute)", zap.String("room", a.Room), zap.Int("path_bytes", len(path)), zap.Error(err))
			}
			return ""
		}
		return tok
	}
}

// previewLink seals p with the current generation's keys, after its
// admin.public_url when one is set (web.PreviewLinker).
func (a *App) previewLink(p waitroom.Preview) (string, error) {
	g := a.current()
	link, err := g.previews.PreviewLink(p)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(g.cfg.Admin.PublicURL, "/") + link, nil
}
