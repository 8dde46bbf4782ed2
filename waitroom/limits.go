package waitroom

import (
	"crypto/sha1"
	"encoding/hex"
	"time"
)

// Limits are a room's admission limits as a store applies them.
type Limits struct {
	MaxActive    int           // sessions inside at once; 0 admits nobody
	AdmitRate    Rate          // token bucket refill
	AdmitBurst   int           // token bucket size, >= 1
	SessionTTL   time.Duration // sliding session lifetime
	AbandonAfter time.Duration // a waiting visitor unseen this long is dropped
	// RecoveryGrace: once the store has put back a ticket that predates its
	// data (proof that it lost its data, say Redis restarted empty), it lets
	// in nobody but such returning ticket holders for this long, counted from
	// the first one: no immediate admission, and ticks admit only restored
	// tickets (which stand at the head of the line, as they are older than
	// every new one). 0 disables the grace.
	RecoveryGrace time.Duration
	// Random makes Admit and AdmitN pick waiting visitors at random from the
	// whole line instead of from its head (mode: random). Immediate
	// admission is unchanged: it needs an empty line anyway.
	Random bool
	// JoinLimit bounds the places one client network (Visitor.Network)
	// takes: a ticket brought back, a solved challenge, an admission at
	// once; a newcomer's number is only refused once the network has no
	// place left. JoinLimit.N at once, then one per JoinLimit.Per/JoinLimit.N
	// (a GCRA, a token bucket of N refilled evenly over Per;
	// ChallengeJoinFactor times N at once for a solved challenge's place).
	// So what holds is a pace, not a count per Per: a network takes at most
	// 2N-1 places in any span shorter than Per (N at once, N-1 refills),
	// (ChallengeJoinFactor+1)N-1 with a challenge. The networks of one
	// block (Visitor.Block) share BlockFactor times that, counted in the
	// same call. The zero Rate is unlimited.
	JoinLimit Rate
	// MaxWaiting bounds the line: past it newcomers are refused
	// (RefusedFull). 0 is unbounded.
	MaxWaiting int64
	// SessionClients bounds the clients (Visitor.Client) that may use one
	// admitted session at once: a client counts from its first request
	// until it has been quiet for ClientQuiet, so a phone whose address
	// changes leaves its old one behind. A further client is refused
	// (RefusedShared, with when the quietest may have gone); the clients
	// already on it never are. 0 is unbounded.
	SessionClients int
	// SessionMax caps a session's time inside, counted from its first
	// use, renewals included (RefusedSessionMax past it); 0 is no cap.
	SessionMax time.Duration
	// Prequeue marks tickets handed out now as a scheduled sale's
	// pre-queue, the only ones its opening's Shuffle draws among.
	Prequeue bool
	// MaxSockets bounds the sockets one admitted session holds open at
	// once (Store.Socket); 0 is unbounded.
	MaxSockets int
	// Idle, when not 0, is how long the room's data outlives its last
	// activity (a room filled in from a template, which comes and goes):
	// its line, sessions and ticket counter then expire this long after
	// the last tick or visitor, instead of the defaults (hours for the
	// line, a month for the counter). Its override, which may hold a
	// "closed" the site asked for, keeps the long lifetime.
	Idle time.Duration
	// PlaceWithin is how long a ticket handed out may take to come back
	// and take its place (PlacementWindow: AbandonAfter when 0). Until
	// then the places behind it count it, so a position never grows when
	// it comes back; after it, it counts nowhere and buys no place.
	PlaceWithin time.Duration
	// SessionCache is the gates' session cache (store.session_cache),
	// set by Rooms.Apply: ClientQuiet outlasts it three times.
	SessionCache time.Duration
}

// PlacementWindow is how long a ticket handed out may take to come back;
// see PlaceWithin.
func (l Limits) PlacementWindow() time.Duration {
	switch {
	case l.PlaceWithin > 0:
		return l.PlaceWithin
	case l.AbandonAfter > 0:
		return l.AbandonAfter
	}
	return time.Minute
}

// ClientQuiet is how long a client of a session must go unheard before
// it no longer counts toward SessionClients: AbandonAfter, but at most
// maxClientQuiet (20 s) and at least minClientQuiet (5 s), and at least
// 3×SessionCache. Short, so an honest owner whose address changes (Happy
// Eyeballs between IPv4 and IPv6, Wi-Fi to LTE, a NAT that sends each
// connection from another address) is not refused for long: the address
// it left stops counting 20 s after its last request. Three session
// caches, because a request a gate's session cache answers is not heard
// by the store: the store hears a busy owner at least every SessionCache
// plus a quarter of ClientQuiet (the write interval of its "last seen"),
// which stays under ClientQuiet, so an owner in use never drops off and
// hands its slot to a copy.
func (l Limits) ClientQuiet() time.Duration {
	return max(min(l.AbandonAfter, maxClientQuiet), minClientQuiet, 3*l.SessionCache)
}

// minClientQuiet and maxClientQuiet bound ClientQuiet from AbandonAfter.
const (
	minClientQuiet = 5 * time.Second
	maxClientQuiet = 20 * time.Second
)

// RenewInterval is how long a session's expiry may lag behind "now +
// SessionTTL" before a request writes a renewal: a tenth of the TTL, at most
// one minute. It bounds writes on the admitted path.
func (l Limits) RenewInterval() time.Duration {
	return min(l.SessionTTL/10, time.Minute)
}

// ShuffleOrder is the sort key of a visitor in a shuffle: the hex SHA-1 of
// the seed followed by the visitor id. Stores sort by it, ascending, so the
// order can be recomputed from the seed and the ids alone.
func ShuffleOrder(seed, visitor string) string {
	sum := sha1.Sum([]byte(seed + visitor))
	return hex.EncodeToString(sum[:])
}
