package web

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// fakeNow is the fake admin API's clock: 09:59 in Seoul, a minute before a
// sale opens.
var fakeNow = time.Date(2026, 11, 21, 0, 59, 0, 0, time.UTC)

// fakeRoom is a RoomView as the admin API sends it.
type fakeRoom struct {
	Name               string         `json:"name"`
	Title              string         `json:"title"`
	Mode               string         `json:"mode"`
	Configured         fakeLimits     `json:"configured"`
	Override           *fakeOverride  `json:"override"`
	Effective          fakeLimits     `json:"effective"`
	Waiting            int            `json:"waiting"`
	Active             int            `json:"active"`
	AdmittedLastMinute int            `json:"admitted_last_minute"`
	Totals             map[string]int `json:"totals"`
	ETABackSeconds     *int           `json:"eta_back_seconds"`
	Source             string         `json:"source"`
	WaitP50            *int           `json:"wait_p50_seconds"`
	WaitP90            *int           `json:"wait_p90_seconds"`
	StoreUp            bool           `json:"store_up"`
	Guards             map[string]any `json:"guards"`
}

type fakeLimits struct {
	MaxActive int    `json:"max_active"`
	AdmitRate string `json:"admit_rate"`
	Mode      string `json:"mode,omitempty"`
}

type fakeOverride struct {
	MaxActive *int   `json:"max_active,omitempty"`
	AdmitRate string `json:"admit_rate,omitempty"`
	Mode      string `json:"mode,omitempty"`
	Changed   string `json:"changed"`
}

// fakeCall is one change the fake admin API received.
type fakeCall struct{ method, path, auth, body string }

// fakeAdmin answers the part of the admin API the dashboard uses, with the
// bearer token check, and records the changes it is sent.
type fakeAdmin struct {
	token string
	calls chan fakeCall
	bad   atomic.Int64 // requests refused for their token

	mu    sync.Mutex
	rooms []fakeRoom
}

func newFakeAdmin(token string) *fakeAdmin {
	eta := 2469 // 12,345 people at 300 a minute
	p50, p90 := 1140, 1820
	return &fakeAdmin{token: token, calls: make(chan fakeCall, 8), rooms: []fakeRoom{{
		Name: "concert", Title: "Winter Concert 2026 · Seoul", Mode: "fifo",
		Configured: fakeLimits{MaxActive: 500, AdmitRate: "300/m", Mode: "fifo"},
		Effective:  fakeLimits{MaxActive: 500, AdmitRate: "300/m"},
		Waiting:    12345, Active: 480, AdmittedLastMinute: 297, ETABackSeconds: &eta, StoreUp: true,
		Source: "yaml", WaitP50: &p50, WaitP90: &p90,
		Totals: map[string]int{"joined": 19020, "admitted": 6675, "released": 5731, "expired": 318, "abandoned": 146},
		Guards: map[string]any{"join_limit": "300/m", "challenge": "pow", "challenge_bits": 14, "identity": "optional",
			"tickets_issued": 24113, "refused_quota": 1877, "refused_full": 0},
	}, {
		Name: "festival", Title: "Jazz Festival · Day 1", Mode: "paused",
		Configured: fakeLimits{MaxActive: 300, AdmitRate: "120/m", Mode: "fifo"},
		Override:   &fakeOverride{Mode: "paused", Changed: fakeNow.Add(-5 * time.Minute).Format(time.RFC3339)},
		Effective:  fakeLimits{MaxActive: 300, AdmitRate: "120/m"},
		Waiting:    2140, Active: 152, StoreUp: true, Source: "api",
		Totals: map[string]int{"joined": 3912, "admitted": 1772, "released": 1490, "expired": 84, "abandoned": 46},
		Guards: map[string]any{"join_limit": "300/m", "challenge": "off", "identity": "off",
			"tickets_issued": 4105, "refused_quota": 12, "refused_full": 0},
	}}}
}

func (f *fakeAdmin) routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /admin/api/rooms", f.auth(func(w http.ResponseWriter, r *http.Request) {
		fakeJSON(w, http.StatusOK, map[string]any{"rooms": f.snapshot()})
	}))
	mux.HandleFunc("GET /admin/api/rooms/{room}/history", f.auth(func(w http.ResponseWriter, r *http.Request) {
		fakeJSON(w, http.StatusOK, fakeHistory(r.PathValue("room")))
	}))
	mux.HandleFunc("PATCH /admin/api/rooms/{room}", f.auth(f.patch))
}

func (f *fakeAdmin) auth(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+f.token {
			f.bad.Add(1)
			fakeJSON(w, http.StatusUnauthorized, map[string]string{"error": "unauthorized"})
			return
		}
		next(w, r)
	}
}

// patch records the change and applies a mode, as the real API would.
func (f *fakeAdmin) patch(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.calls <- fakeCall{r.Method, r.URL.Path, r.Header.Get("Authorization"), string(body)}
	var change struct {
		Mode string `json:"mode"`
	}
	if err := json.Unmarshal(body, &change); err != nil || change.Mode == "" {
		fakeJSON(w, http.StatusBadRequest, map[string]string{"error": "mode: the fake only changes modes"})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.rooms {
		if f.rooms[i].Name == r.PathValue("room") {
			f.rooms[i].Mode = change.Mode
			f.rooms[i].Override = &fakeOverride{Mode: change.Mode, Changed: fakeNow.Format(time.RFC3339)}
			fakeJSON(w, http.StatusOK, f.rooms[i])
			return
		}
	}
	fakeJSON(w, http.StatusNotFound, map[string]string{"error": "room: no such room"})
}

func (f *fakeAdmin) snapshot() []fakeRoom {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRoom(nil), f.rooms...)
}

func (f *fakeAdmin) refused() int64 { return f.bad.Load() }

func fakeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// fakeHistory is 15 minutes of plausible numbers every 10 seconds, oldest
// first, ending at the room's current numbers: the concert's line fills up
// before the sale while it admits at 300 a minute; the festival was paused
// five minutes ago, so its line grows and nobody new gets in.
func fakeHistory(room string) map[string]any {
	const n = 91
	points := make([]map[string]any, n)
	for i := range n {
		f := float64(i) / (n - 1)
		wob := math.Sin(float64(i)*0.9) + 0.6*math.Sin(float64(i)*0.37) // deterministic noise
		var waiting, active, rate float64
		switch room {
		case "concert":
			waiting = 900 + 11445*f*f*(3-2*f) + 60*wob*(1-f)
			active = 480 - 190*math.Exp(-7*f) + 7*wob*(1-f)
			rate = 297 + 9*wob*(1-f) - 170*math.Exp(-9*f)
		default:
			after := max(0, float64(i-60)) // steps since the pause
			waiting = 800 + 740*f + 20*after + 25*wob*(1-f)
			active = 204.5 - 1.75*after + 4*wob*(1-f)
			rate = max(0, 118+6*wob) * max(0, 1-after/6)
		}
		points[i] = map[string]any{
			"t":       fakeNow.Add(time.Duration(i-n+1) * 10 * time.Second).Format(time.RFC3339),
			"waiting": math.Round(waiting), "active": math.Round(min(active, 500)), "admitted_per_minute": math.Round(rate),
		}
	}
	return map[string]any{"room": room, "step_seconds": 10, "points": points}
}
