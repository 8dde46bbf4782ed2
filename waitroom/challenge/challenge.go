package challenge

import (
	"encoding/base64"
	"errors"
	"time"
)

// Challenge is what a prefix carries. Issue signs it; Check returns it once
// the work is done. Times have one-second resolution.
type Challenge struct {
	// Room is the room the challenge admits to.
	Room string
	// Network is the client's network as the caller names it, for example
	// "203.0.113.0/24" or "2001:db8:1:200::/56". The prefix carries only a
	// keyed 64-bit tag of Room and Network, so neither length matters.
	Network string
	// Number is the ticket number taken when the challenge was issued: the
	// place in line the solver gets, however long the work takes.
	Number int64
	// Bits is how many leading zero bits SHA-256(prefix || nonce) must have,
	// 0 to MaxBits. Expected work is 2^Bits hashes.
	Bits int
	// Issued is when the challenge was issued.
	Issued time.Time
	// Expires is when Check stops accepting it, and how long the caller must
	// remember ID as spent.
	Expires time.Time
	// ID is random and unique per challenge: the key that makes it single
	// use. Issue draws one when it is zero.
	ID ID
}

// ID names one challenge for the store's spent list.
type ID [16]byte

// String is the ID in base64url without padding (22 characters), for use in
// a store key.
func (id ID) String() string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// MaxBits bounds the difficulty a prefix can carry. At 2^32 expected hashes a
// phone would work for hours, so nothing sensible lies beyond.
const MaxBits = 32

// Refusals of Check. Each is a distinct outcome for metrics; see Result.
var (
	// ErrMalformed: the header is not <prefix>:<nonce> within the bounds, or
	// the prefix does not decode. Answer with a new challenge.
	ErrMalformed = errors.New("challenge: malformed")
	// ErrBadMAC: no key signed this prefix (forged, or signed by a key
	// since removed). Answer with a new challenge.
	ErrBadMAC = errors.New("challenge: bad signature")
	// ErrWrongRoom: the prefix was issued for another room.
	ErrWrongRoom = errors.New("challenge: issued for another room")
	// ErrWrongNetwork: the prefix was issued to another network; the client
	// moved (Wi-Fi to mobile) or the solution was passed on.
	ErrWrongNetwork = errors.New("challenge: issued to another network")
	// ErrExpired: the prefix is past Expires.
	ErrExpired = errors.New("challenge: expired")
	// ErrNotEnoughWork: the hash has fewer leading zero bits than the prefix
	// asks for.
	ErrNotEnoughWork = errors.New("challenge: not enough work")
	// ErrSpent is not returned by Check: the caller's store returns it when
	// the ID was spent before, so that every refusal has one name here.
	ErrSpent = errors.New("challenge: already used")
)

// Result is the label of an outcome for waitroom_challenges_total: "ok" for
// nil, then "malformed", "bad_mac", "wrong_room", "wrong_network",
// "expired", "not_enough_work", "spent", and "error" for anything else.
func Result(err error) string {
	if err == nil {
		return "ok"
	}
	for _, r := range results {
		if errors.Is(err, r.err) {
			return r.label
		}
	}
	return "error"
}

var results = [...]struct {
	err   error
	label string
}{
	{ErrMalformed, "malformed"},
	{ErrBadMAC, "bad_mac"},
	{ErrWrongRoom, "wrong_room"},
	{ErrWrongNetwork, "wrong_network"},
	{ErrExpired, "expired"},
	{ErrNotEnoughWork, "not_enough_work"},
	{ErrSpent, "spent"},
}
