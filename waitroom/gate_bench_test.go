package waitroom_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/memstore"
	"github.com/waitroom/waitroom/web"
)

// These benchmarks time Gate.Serve alone, on the memory store, with no
// network: what the gate itself costs a request, and how much it
// allocates. cmd/waitroom's BenchmarkPath measures the whole gateway
// against a bare proxy.

// discard is a ResponseWriter that keeps nothing, so its own cost stays
// out of the figures.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

func benchGate(b *testing.B, maxActive int, sessionCache time.Duration) (*waitroom.Gate, *waitroom.Tickets) {
	tickets, err := waitroom.NewTickets(waitroom.Cookie{Name: "waitroom", MaxAge: time.Hour}, []waitroom.KeyPair{waitroom.GenerateKeyPair()})
	if err != nil {
		b.Fatal(err)
	}
	pages, err := web.New()
	if err != nil {
		b.Fatal(err)
	}
	room := waitroom.Room{Name: "concert", Tick: time.Second, StatusCode: 200, Refresh: 5 * time.Second, RefreshMax: 30 * time.Second,
		Limits: waitroom.Limits{MaxActive: maxActive, AdmitRate: waitroom.Rate{N: 1000000, Per: time.Second}, AdmitBurst: 1000000,
			SessionTTL: 10 * time.Minute, AbandonAfter: 10 * time.Minute}}
	store := memstore.New()
	b.Cleanup(func() { _ = store.Close() })
	rooms := waitroom.NewRooms(waitroom.RoomsOptions{Store: store})
	rooms.Apply(waitroom.RoomsConfig{Rooms: []waitroom.Room{room}, SessionCache: sessionCache})
	g := waitroom.NewGate(waitroom.GateOptions{Rooms: rooms, Tickets: tickets,
		Responder: web.NewResponder(pages, map[string]web.Page{"concert": {Title: "Concert", Locale: "en"}})})
	return g, tickets
}

// ticketOf has a new visitor go through the gate and returns its cookie.
func ticketOf(b *testing.B, g *waitroom.Gate, next http.Handler) string {
	w := httptest.NewRecorder()
	g.Serve(w, httptest.NewRequest(http.MethodGet, "/events/1", nil), "concert", next)
	for _, c := range w.Result().Cookies() {
		return c.Name + "=" + c.Value
	}
	b.Fatal("no ticket")
	return ""
}

func serveLoop(b *testing.B, g *waitroom.Gate, next http.Handler, req func() *http.Request) {
	w := &discard{h: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		clear(w.h)
		g.Serve(w, req(), "concert", next)
	}
}

func BenchmarkGate_Serve(b *testing.B) {
	var upstream int
	next := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { upstream++ })
	b.Run("admitted", func(b *testing.B) {
		g, _ := benchGate(b, 1000, 0)
		cookie := ticketOf(b, g, next)
		r := httptest.NewRequest(http.MethodGet, "/events/1", nil)
		r.Header.Set("Cookie", cookie)
		upstream = 0
		serveLoop(b, g, next, func() *http.Request { return r })
		if upstream == 0 {
			b.Fatal("the admitted visitor never reached the upstream")
		}
	})
	b.Run("admitted-cached", func(b *testing.B) {
		g, _ := benchGate(b, 1000, time.Minute) // every request after the first answered from the cache
		cookie := ticketOf(b, g, next)
		r := httptest.NewRequest(http.MethodGet, "/events/1", nil)
		r.Header.Set("Cookie", cookie)
		serveLoop(b, g, next, func() *http.Request { return r })
	})
	b.Run("poll", func(b *testing.B) {
		g, _ := benchGate(b, 0, 0)
		cookie := ticketOf(b, g, next)
		r := httptest.NewRequest(http.MethodGet, "/events/1", nil)
		r.Header.Set("Cookie", cookie)
		r.Header.Set("Accept", "application/json")
		serveLoop(b, g, next, func() *http.Request { return r })
	})
	b.Run("join", func(b *testing.B) {
		g, _ := benchGate(b, 0, 0)
		r := httptest.NewRequest(http.MethodGet, "/events/1", nil)
		r.Header.Set("Accept", "text/html")
		serveLoop(b, g, next, func() *http.Request { return r })
	})
}

// BenchmarkGate_Status: a waiting page's poll of /.waitroom/status.
func BenchmarkGate_Status(b *testing.B) {
	next := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	g, _ := benchGate(b, 0, 0)
	cookie := ticketOf(b, g, next)
	r := httptest.NewRequest(http.MethodGet, "/.waitroom/status?room=concert&return_to=%2Fevents%2F1", nil)
	r.Header.Set("Cookie", cookie)
	r.Header.Set("Accept", "application/json")
	w := &discard{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		g.Status(w, r)
	}
}
