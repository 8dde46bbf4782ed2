package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/waitroom/waitroom/waitroom"
)

// AdminOptions wires the admin listener's handler.
type AdminOptions struct {
	// Token is the bearer token; empty leaves the API open, which the
	// application allows only on a loopback address.
	Token string
	// ReleaseToken, when set, is a second bearer token that POST
	// /admin/api/rooms/{room}/release alone accepts: the site's, to end
	// sessions without the power to pause, create or delete rooms.
	ReleaseToken string
	// Rooms are the rooms in service: every read and every change of the
	// API goes through them.
	Rooms *waitroom.Rooms
	// Pages renders the dashboard.
	Pages *Pages
	// Definer creates, replaces and deletes rooms through the API; nil
	// answers those requests 501.
	Definer RoomDefiner
	// JWKS serves the admission pass's public keys at /admin/api/jwks; it
	// is called per request, so a reload's keys show at once. nil answers 404.
	JWKS func() http.Handler
	// Reload reads the configuration file again (POST /admin/api/reload):
	// the result ("ok", "unchanged"), or the problems by key when the file
	// was refused and the running configuration stays. nil answers 501.
	Reload func(ctx context.Context) (result string, problems []string, err error)
	// Preview makes preview links (POST /admin/api/rooms/{room}/preview);
	// nil answers 501.
	Preview PreviewLinker
	// Metrics serves /metrics; nil answers 404.
	Metrics http.Handler
	// Watch reads what the metrics counted of a room's newcomers
	// (metrics.Metrics.Watched), shown as the room's "watch"; nil for none.
	Watch func(room string) (waitroom.Watched, bool)
	// Ready reports whether the gateway can serve, and lines for /readyz's
	// body after "ready" (the store's state, what an operator should fix).
	// nil is always ready.
	Ready func(ctx context.Context) (lines []string, err error)
	// StoreState says what the store is going through now, for the
	// dashboard (ok, failing over, unreachable); it must be cheap, as
	// every room's view asks. nil: ok while the rooms reach the store,
	// else unreachable.
	StoreState func() waitroom.StoreState
	Log        *zap.Logger
	// WrongTokenPace is how often one client (an address, an IPv6 /64)
	// hears that its token is wrong, after a burst of 3: each wrong try
	// waits its turn. 0: DefaultWrongTokenPace (250ms).
	WrongTokenPace time.Duration
}

// maxAdminBody bounds a request body of the admin API.
const maxAdminBody = 64 << 10

// NewAdmin returns the admin listener's handler: the JSON API and the
// dashboard behind the bearer token, /metrics too; /healthz and /readyz open,
// for probes.
func NewAdmin(o AdminOptions) *Admin {
	a := &admin{AdminOptions: o}
	a.setToken(o.Token)
	a.setReleaseToken(o.ReleaseToken)
	if a.Log == nil {
		a.Log = zap.NewNop()
	}
	a.wrong = newWrongTokens(o.WrongTokenPace, a.Log)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { plain(w, http.StatusOK, "ok") })
	mux.HandleFunc("GET /readyz", a.readyz)
	mux.HandleFunc("GET /admin/{$}", o.Pages.Dashboard) // the page holds no data; its API calls carry the token
	mux.HandleFunc("GET /admin", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/admin/", http.StatusMovedPermanently)
	})
	api := http.NewServeMux()
	api.HandleFunc("GET /admin/api/rooms", a.listRooms)
	api.HandleFunc("GET /admin/api/rooms/{room}", a.getRoom)
	api.HandleFunc("GET /admin/api/rooms/{room}/history", a.history)
	api.HandleFunc("PATCH /admin/api/rooms/{room}", a.patchRoom)
	api.HandleFunc("DELETE /admin/api/rooms/{room}/overrides", a.clearOverride)
	api.HandleFunc("POST /admin/api/rooms/{room}/admit", a.admitNow)
	api.HandleFunc("POST /admin/api/rooms/{room}/release", a.release)
	api.HandleFunc("POST /admin/api/rooms/{room}/preview", a.preview)
	api.HandleFunc("POST /admin/api/reload", a.reload)
	api.HandleFunc("GET /admin/api/jwks", func(w http.ResponseWriter, r *http.Request) {
		if o.JWKS == nil {
			apiError(w, http.StatusNotFound, "no admission pass is configured")
			return
		}
		o.JWKS().ServeHTTP(w, r)
	})
	api.HandleFunc("POST /admin/api/rooms", a.createRoom)
	api.HandleFunc("PUT /admin/api/rooms/{room}", a.replaceRoom)
	api.HandleFunc("DELETE /admin/api/rooms/{room}", a.deleteRoom)
	if o.Metrics != nil {
		api.Handle("GET /metrics", o.Metrics)
	}
	guarded := a.authorize(api)
	mux.Handle("/admin/api/", guarded)
	mux.Handle("/metrics", guarded)
	// A page of another site in the operator's browser must not drive the
	// API: cross-origin writes are refused (Fetch Metadata, Origin), and a
	// tokenless API answers only to a loopback Host, which DNS rebinding
	// cannot forge.
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		plain(w, http.StatusForbidden, "forbidden")
	}))
	return &Admin{Handler: a.loopbackHost(cop.Handler(mux)), a: a}
}

// Admin is the admin listener's handler.
type Admin struct {
	http.Handler
	a *admin
}

// SetToken puts a new bearer token in service at once ("" leaves the API
// open, which the application allows only on loopback): a reload that
// read a new admin.token_file needs no restart, and the old token stops
// working with the swap.
func (h *Admin) SetToken(token string) { h.a.setToken(token) }

func (a *admin) setToken(token string) { storeDigest(&a.digest, token) }

// SetReleaseToken puts a new release token in service at once ("" for
// none), as SetToken does the admin token.
func (h *Admin) SetReleaseToken(token string) { h.a.setReleaseToken(token) }

func (a *admin) setReleaseToken(token string) { storeDigest(&a.releaseDigest, token) }

func storeDigest(p *atomic.Pointer[[sha256.Size]byte], token string) {
	if token == "" {
		p.Store(nil)
		return
	}
	sum := sha256.Sum256([]byte(token))
	p.Store(&sum)
}

// loopbackHost refuses requests whose Host is not this machine while no
// token guards the API.
func (a *admin) loopbackHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.digest.Load() == nil && !isLoopbackHost(r.Host) {
			plain(w, http.StatusForbidden, "forbidden")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func isLoopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

type admin struct {
	AdminOptions
	digest        atomic.Pointer[[sha256.Size]byte] // nil: no token
	releaseDigest atomic.Pointer[[sha256.Size]byte] // nil: no release token
	wrong         *wrongTokens
}

// authorize lets through requests with the bearer token, compared in
// constant time (on digests, so the length does not leak either), and
// release requests with the release token too. A wrong or missing token
// gets 401 and nothing more, once its turn comes (wrongTokens).
func (a *admin) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if want := a.digest.Load(); want != nil {
			scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
			sum := sha256.Sum256([]byte(got))
			// The scheme is case-insensitive (RFC 9110); the token is not.
			ok := subtle.ConstantTimeCompare(sum[:], want[:]) == 1
			if rel := a.releaseDigest.Load(); rel != nil && isRelease(r) {
				ok = subtle.ConstantTimeCompare(sum[:], rel[:]) == 1 || ok
			}
			if !strings.EqualFold(scheme, "Bearer") || !ok {
				a.wrong.wait(r)
				w.Header().Set("WWW-Authenticate", `Bearer realm="waitroom"`)
				plain(w, http.StatusUnauthorized, "unauthorized")
				return
			}
		}
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// isRelease reports the one request the release token may make: POST
// /admin/api/rooms/{room}/release, the room one clean path segment.
func isRelease(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	room, ok := strings.CutPrefix(r.URL.Path, "/admin/api/rooms/")
	if !ok {
		return false
	}
	room, ok = strings.CutSuffix(room, "/release")
	return ok && room != "" && room != "." && room != ".." && !strings.Contains(room, "/")
}

func (a *admin) readyz(w http.ResponseWriter, r *http.Request) {
	if a.Ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		lines, err := a.Ready(ctx)
		if err != nil {
			a.Log.Debug("not ready", zap.Error(err))
			plain(w, http.StatusServiceUnavailable, "not ready")
			return
		}
		msg := "ready"
		for _, line := range lines {
			msg += "\n" + line
		}
		plain(w, http.StatusOK, msg)
		return
	}
	plain(w, http.StatusOK, "ready")
}

// room finds the path's room among the rooms in service, answering 404
// itself.
func (a *admin) room(w http.ResponseWriter, r *http.Request) (string, bool) {
	name := r.PathValue("room")
	if _, ok := a.Rooms.Info(name); !ok {
		apiError(w, http.StatusNotFound, "unknown room "+quote(name))
		return "", false
	}
	return name, true
}

// decode reads a JSON body strictly: unknown fields and trailing data are
// errors that name what was wrong.
func decode(w http.ResponseWriter, r *http.Request, dst any) bool {
	// Only JSON: a form or text/plain body is what a cross-site page could
	// send without asking the browser first.
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		apiError(w, http.StatusUnsupportedMediaType, "Content-Type: want application/json")
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxAdminBody))
	dec.DisallowUnknownFields()
	err := dec.Decode(dst)
	if err == nil && dec.More() {
		err = errors.New("one JSON object expected, found more after it")
	}
	if err != nil {
		apiError(w, http.StatusBadRequest, "bad JSON body: "+jsonProblem(err))
		return false
	}
	return true
}

// storeFailed answers a store error without its text: the log has it.
func (a *admin) storeFailed(w http.ResponseWriter, what string, err error) {
	a.Log.Warn(what, zap.Error(err))
	apiError(w, http.StatusServiceUnavailable, "the store is unavailable; try again")
}

func apiError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	// Problems such as "must be >= 0" read as written: the answer is JSON
	// with nosniff, never HTML, so < > & need no escaping.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	b := []byte(`{"error":"encoding the answer failed"}`)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
	} else {
		b = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func plain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg + "\n"))
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
