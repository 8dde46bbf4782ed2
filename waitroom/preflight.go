package waitroom

import (
	"cmp"
	"crypto/sha256"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// isPreflight reports a CORS preflight as a browser sends one: OPTIONS with
// Origin and Access-Control-Request-Method, and no body. Anything else
// shaped like one (with a body) is an ordinary request and meets the room.
func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" &&
		r.Header.Get("Origin") != "" && r.ContentLength == 0 && len(r.TransferEncoding) == 0
}

// preflight serves a CORS preflight to a room's path. A browser sends it
// without cookies, so it can neither take a ticket nor show one, and only
// the site knows its CORS policy: it goes to the site, stripped of any
// upgrade (a preflight never opens a socket). Each client network may send
// the room's preflight_limit of them, counted in the store across
// instances; past it the site's own recent answer to the same question
// (path, origin, method, headers) is replayed from a short cache, so a
// busy office behind one address keeps working, and a question nobody
// asked lately is refused with 429. A flood therefore costs the site at
// most preflight_limit requests per network, whatever it varies. While the
// store fails nothing counts, so nothing goes to the site either: a
// recent answer is replayed, else 503, until store.on_error open opens the
// room to everyone (then preflights go through with the rest).
//
// An auth request (limited, its status past the limit) proxies nothing:
// within the limit it is allowed through next, past it refused with
// limited; nothing is recorded or replayed, since next's answer is the
// auth endpoint's, not the site's.
func (g *Gate) preflight(w http.ResponseWriter, r *http.Request, lr *liveRoom, next http.Handler, limited int) {
	dropUpgrade(r.Header)
	key := preflightKey(lr.name, r)
	wait, err := g.preflightWait(r, lr)
	if err != nil || wait > 0 {
		if limited == 0 && g.preflights.replay(w, key) {
			return
		}
		status := cmp.Or(limited, http.StatusTooManyRequests)
		if err != nil {
			wait, status = max(lr.room().Refresh, time.Second), cmp.Or(limited, http.StatusServiceUnavailable)
		}
		w.Header().Set("Retry-After", strconv.FormatInt(int64((wait+time.Second-1)/time.Second), 10))
		g.resp.Error(w, r, status)
		return
	}
	if limited != 0 {
		next.ServeHTTP(w, r)
		return
	}
	next.ServeHTTP(&preflightRecorder{ResponseWriter: w, cache: &g.preflights, key: key}, r)
}

// preflightWait spends one of the client network's preflights in the
// room: 0 when allowed, else how long until the next. A store that fails
// counts nothing, so the preflight is not allowed (the error), unless
// store.on_error open has opened the gate to everyone.
func (g *Gate) preflightWait(r *http.Request, lr *liveRoom) (time.Duration, error) {
	limit := lr.room().PreflightLimit
	if limit.IsUnlimited() {
		return 0, nil
	}
	// Keyed on the unshared network: shared_networks widens join_limit,
	// which a block ceiling caps, not this, which has no other ceiling.
	wait, err := g.rooms.store.Allow(r.Context(), lr.name, "preflight", networkKey(g.unsharedNetwork(r)), limit)
	if err != nil {
		g.rooms.health.failed(err)
		if g.rooms.outageOpen() {
			return 0, nil
		}
		return 0, err
	}
	g.rooms.health.answered()
	return wait, nil
}

// dropUpgrade removes Upgrade, and Connection with every header it names.
func dropUpgrade(h http.Header) {
	for _, v := range h["Connection"] {
		for _, name := range splitTokens(v) {
			h.Del(name)
		}
	}
	h.Del("Connection")
	h.Del("Upgrade")
}

// preflightKey names the question a preflight asks, hashed so a key is
// small whatever the headers hold.
func preflightKey(room string, r *http.Request) [32]byte {
	h := sha256.New()
	for _, s := range []string{room, r.Host, r.URL.Path, r.Header.Get("Origin"),
		r.Header.Get("Access-Control-Request-Method"), r.Header.Get("Access-Control-Request-Headers"),
		r.Header.Get("Access-Control-Request-Private-Network")} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// preflightTTL is how long a site's preflight answer is replayed; short,
// so a change of CORS policy takes effect quickly. maxPreflights bounds
// the cache: past it, it starts over.
const (
	preflightTTL  = 10 * time.Second
	maxPreflights = 1024
)

// preflightCache holds the site's recent successful preflight answers:
// status and headers, never a body (a preflight's is empty) nor a cookie.
type preflightCache struct {
	mu      sync.Mutex
	answers map[[32]byte]preflightAnswer
}

type preflightAnswer struct {
	status int
	header http.Header
	until  time.Time
}

func (c *preflightCache) store(key [32]byte, status int, h http.Header) {
	h = h.Clone()
	h.Del("Set-Cookie")
	h.Del("Content-Length")
	h.Del("Date")
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answers == nil || len(c.answers) >= maxPreflights {
		c.answers = make(map[[32]byte]preflightAnswer)
	}
	c.answers[key] = preflightAnswer{status: status, header: h, until: time.Now().Add(preflightTTL)}
}

// replay writes the cached answer to key; false when there is none.
func (c *preflightCache) replay(w http.ResponseWriter, key [32]byte) bool {
	c.mu.Lock()
	a, ok := c.answers[key]
	c.mu.Unlock()
	if !ok || time.Now().After(a.until) {
		return false
	}
	for k, vs := range a.header {
		w.Header()[k] = append([]string(nil), vs...)
	}
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(a.status)
	return true
}

// preflightRecorder keeps the site's answer to a preflight, if it is a
// success, for preflightCache.
type preflightRecorder struct {
	http.ResponseWriter
	cache *preflightCache
	key   [32]byte
	wrote bool
}

func (p *preflightRecorder) WriteHeader(code int) {
	if !p.wrote && code >= 200 {
		p.wrote = true
		if code < 300 {
			p.cache.store(p.key, code, p.Header())
		}
	}
	p.ResponseWriter.WriteHeader(code)
}

func (p *preflightRecorder) Write(b []byte) (int, error) {
	if !p.wrote {
		p.WriteHeader(http.StatusOK)
	}
	return p.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush underneath.
func (p *preflightRecorder) Unwrap() http.ResponseWriter { return p.ResponseWriter }
