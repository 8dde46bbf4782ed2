package web

import (
	"net/http"
	"net/netip"
	"sync"
	"time"

	"go.uber.org/zap"
)

// DefaultWrongTokenPace is how often one client hears that its admin token
// is wrong, once its burst is spent: four guesses a second.
const DefaultWrongTokenPace = 250 * time.Millisecond

const (
	// wrongTokenBurst wrong tries answer at once: an operator's typo.
	wrongTokenBurst = 3
	// wrongTokenLogEvery spaces the log lines about wrong tokens.
	wrongTokenLogEvery = 10 * time.Second
	// maxWrongClients bounds the clients tracked; past it (after dropping
	// the idle ones) new clients share one schedule.
	maxWrongClients = 1024
)

// wrongTokens paces and counts wrong admin tokens. Each client (an address,
// an IPv6 /64) has a GCRA schedule: past a small burst every wrong try
// waits for its own turn, one per pace, so N guesses take about N paces
// whether sent one after another or all at once. The token is compared
// before, so a right one never waits. At most one log line per
// wrongTokenLogEvery, with the count; never the token.
type wrongTokens struct {
	pace time.Duration
	log  *zap.Logger

	mu       sync.Mutex
	due      map[netip.Addr]time.Time // a client's next free turn
	logged   time.Time
	unlogged int
}

func newWrongTokens(pace time.Duration, log *zap.Logger) *wrongTokens {
	if pace <= 0 {
		pace = DefaultWrongTokenPace
	}
	return &wrongTokens{pace: pace, log: log, due: make(map[netip.Addr]time.Time)}
}

// wait holds a wrong try until its turn, or until the client goes away.
func (t *wrongTokens) wait(r *http.Request) {
	d := t.take(wrongClient(r.RemoteAddr), time.Now())
	if d <= 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-r.Context().Done():
	}
}

// take books client's next turn and returns how long it must wait for it.
func (t *wrongTokens) take(client netip.Addr, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.count(client, now)
	if _, ok := t.due[client]; !ok && len(t.due) >= maxWrongClients {
		for c, due := range t.due {
			if due.Before(now) {
				delete(t.due, c)
			}
		}
		if len(t.due) >= maxWrongClients {
			client = netip.Addr{} // the overflow shares one schedule
		}
	}
	due := t.due[client]
	if due.Before(now) {
		due = now
	}
	t.due[client] = due.Add(t.pace)
	return due.Sub(now) - wrongTokenBurst*t.pace
}

// count logs the wrong tries, at most once per wrongTokenLogEvery.
func (t *wrongTokens) count(client netip.Addr, now time.Time) {
	t.unlogged++
	if now.Sub(t.logged) < wrongTokenLogEvery {
		return
	}
	t.log.Warn("wrong admin tokens; each waits its client's turn (logged at most once per 10s)",
		zap.Int("count", t.unlogged), zap.String("client", client.String()))
	t.logged, t.unlogged = now, 0
}

// wrongClient is the client a wrong try is paced as: its address, or its
// /64 for IPv6, where one subscriber holds a whole /64.
func wrongClient(remoteAddr string) netip.Addr {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	a := ap.Addr().Unmap().WithZone("")
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.Addr()
	}
	return a
}
