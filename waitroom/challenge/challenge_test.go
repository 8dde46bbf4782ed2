package challenge

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

var (
	t0          = time.Unix(1_760_000_000, 0)
	testNetwork = "203.0.113.0/24"
)

func testIssuer(tb testing.TB, secrets ...string) *Issuer {
	tb.Helper()
	if len(secrets) == 0 {
		secrets = []string{"first secret"}
	}
	var keys [][]byte
	for _, s := range secrets {
		keys = append(keys, DeriveKey([]byte(s), "challenge"))
	}
	is, err := New(keys...)
	if err != nil {
		tb.Fatal(err)
	}
	return is
}

func sample() Challenge {
	return Challenge{Room: "concert", Network: testNetwork, Number: 1_760_000_000_000_042, Bits: 8,
		Issued: t0, Expires: t0.Add(2 * time.Minute)}
}

// solved issues c and returns a header that passes the work check.
func solved(is *Issuer, c Challenge) string {
	prefix := is.Issue(c)
	return prefix + ":" + Solve(prefix, c.Bits)
}

func TestIssuer_RoundTrip(t *testing.T) {
	t.Parallel()
	is := testIssuer(t)
	tests := []Challenge{
		sample(),
		{Room: strings.Repeat("r", 1000), Network: "2001:db8:abcd:1200::/56", Number: math.MaxInt64, Bits: 0,
			Issued: time.Unix(math.MaxInt64/2, 0), Expires: time.Unix(math.MaxInt64/2, 0).Add(MaxTTL)},
		{Room: "", Network: "", Number: math.MinInt64, Bits: 1, Issued: time.Unix(-5, 0), Expires: time.Unix(100, 0)},
		{Room: "a", Network: "b", Number: 0, Bits: 12, Issued: t0, Expires: t0.Add(time.Second), ID: ID{1, 2, 3}},
	}
	for _, c := range tests {
		prefix := is.Issue(c)
		if len(prefix) < 71 || len(prefix) > 100 || strings.ContainsAny(prefix, ":=+/ ") {
			t.Errorf("prefix %q: %d bytes", prefix, len(prefix))
		}
		got, err := is.Check(prefix+":"+Solve(prefix, c.Bits), c.Room, c.Network, c.Issued)
		if err != nil {
			t.Fatalf("Check: %v", err)
		}
		if got.ID == (ID{}) || c.ID != (ID{}) && got.ID != c.ID {
			t.Errorf("ID %v, issued with %v", got.ID, c.ID)
		}
		c.ID = got.ID
		if got != c {
			t.Errorf("Check = %+v\nissued  %+v", got, c)
		}
	}
}

func TestIssuer_IssueDrawsIDs(t *testing.T) {
	t.Parallel()
	is := testIssuer(t)
	a, b := is.Issue(sample()), is.Issue(sample())
	ca, _ := is.Check(solved(is, sample()), "concert", testNetwork, t0)
	if a == b || ca.ID == (ID{}) || len(ca.ID.String()) != 22 {
		t.Errorf("two issues of one challenge: %q, %q; id %q", a, b, ca.ID)
	}
}

func TestIssuer_Clamps(t *testing.T) {
	t.Parallel()
	is := testIssuer(t)
	tests := []struct {
		bits, wantBits int
		life, want     time.Duration
	}{
		{-3, 0, time.Minute, time.Minute},
		{MaxBits + 9, MaxBits, 2 * MaxTTL, MaxTTL},
		{4, 4, -time.Hour, 0},
		{4, 4, 1500 * time.Millisecond, time.Second},
	}
	for _, tt := range tests {
		c := Challenge{Room: "r", Bits: tt.bits, Issued: t0, Expires: t0.Add(tt.life)}
		prefix := is.Issue(c)
		raw, err := decodePrefix(nil, prefix)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := parsePayload(raw[:len(raw)-macBytes])
		if err != nil || got.Bits != tt.wantBits || got.Expires.Sub(got.Issued) != tt.want {
			t.Errorf("bits %d, life %v: got %+v, %v", tt.bits, tt.life, got, err)
		}
	}
}

// TestIssuer_Check plays the other side: every refusal has its own error.
func TestIssuer_Check(t *testing.T) {
	t.Parallel()
	is := testIssuer(t)
	c := sample()
	prefix := is.Issue(c)
	nonce := Solve(prefix, c.Bits)
	good := prefix + ":" + nonce
	lazy := "0"
	for WorkBits(prefix, lazy) >= c.Bits {
		lazy += "0"
	}
	other := testIssuer(t, "another secret").Issue(c)
	tests := []struct {
		name, header, room, network string
		now                         time.Time
		want                        error
	}{
		{"ok", good, "concert", testNetwork, t0, nil},
		{"ok at the last second", good, "concert", testNetwork, c.Expires.Add(-time.Nanosecond), nil},
		{"ok before issue (a skewed clock)", good, "concert", testNetwork, t0.Add(-time.Hour), nil},
		{"empty", "", "concert", testNetwork, t0, ErrMalformed},
		{"no colon", prefix + nonce, "concert", testNetwork, t0, ErrMalformed},
		{"two colons", prefix + ":" + nonce + ":", "concert", testNetwork, t0, ErrMalformed},
		{"colon first", ":" + prefix + nonce, "concert", testNetwork, t0, ErrMalformed},
		{"empty nonce", prefix + ":", "concert", testNetwork, t0, ErrMalformed},
		{"long nonce", prefix + ":" + strings.Repeat("0", MaxNonce+1), "concert", testNetwork, t0, ErrMalformed},
		{"nonce with a space", good + " ", "concert", testNetwork, t0, ErrMalformed},
		{"nonce with a dot", good + ".", "concert", testNetwork, t0, ErrMalformed},
		{"nonce with a slash", good + "/", "concert", testNetwork, t0, ErrMalformed},
		{"nonce not ASCII", good + "é", "concert", testNetwork, t0, ErrMalformed},
		{"header too long", prefix + ":" + strings.Repeat("0", MaxHeader), "concert", testNetwork, t0, ErrMalformed},
		{"prefix cut", prefix[:len(prefix)-1] + ":" + nonce, "concert", testNetwork, t0, ErrMalformed},
		{"prefix padded", prefix + "==:" + nonce, "concert", testNetwork, t0, ErrMalformed},
		{"prefix in std base64", strings.NewReplacer("-", "+", "_", "/").Replace(prefix) + "+:" + nonce, "concert", testNetwork, t0, ErrMalformed},
		{"prefix too short", prefix[:40] + ":" + nonce, "concert", testNetwork, t0, ErrMalformed},
		{"prefix too long", prefix + strings.Repeat("A", 40) + ":" + nonce, "concert", testNetwork, t0, ErrMalformed},
		{"other version", "Ag" + prefix[2:] + ":" + nonce, "concert", testNetwork, t0, ErrMalformed},
		{"prefix with a line break", prefix[:20] + "\r\n" + prefix[20:] + ":" + nonce, "concert", testNetwork, t0, ErrMalformed},
		{"trailing bits", prefix[:len(prefix)-1] + string(noisyLast(prefix)) + ":" + nonce, "concert", testNetwork, t0, ErrMalformed},
		{"tampered", prefix[:30] + flip(prefix[30]) + prefix[31:] + ":" + nonce, "concert", testNetwork, t0, ErrBadMAC},
		{"other key", other + ":" + Solve(other, c.Bits), "concert", testNetwork, t0, ErrBadMAC},
		{"other room", good, "festival", testNetwork, t0, ErrWrongRoom},
		{"room differs in case", good, "Concert", testNetwork, t0, ErrWrongRoom},
		{"other network", good, "concert", "198.51.100.0/24", t0, ErrWrongNetwork},
		{"expired", good, "concert", testNetwork, c.Expires, ErrExpired},
		{"not enough work", prefix + ":" + lazy, "concert", testNetwork, t0, ErrNotEnoughWork},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := is.Check(tt.header, tt.room, tt.network, tt.now)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Check = %v, want %v", err, tt.want)
			}
			if err != nil && got != (Challenge{}) {
				t.Errorf("refused, yet returned %+v", got)
			}
		})
	}
}

// noisyLast returns the prefix's last character with its unused low bits
// set: the same bytes in a second spelling, which strict decoding refuses.
func noisyLast(prefix string) byte {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	unused := uint(6 - len(prefix)*6%8) // bits of the last character beyond the data
	if unused == 6 {
		panic("prefix has no spare bits")
	}
	i := strings.IndexByte(alphabet, prefix[len(prefix)-1])
	return alphabet[i|1]
}

func flip(b byte) string {
	if b == 'A' {
		return "B"
	}
	return "A"
}

func TestIssuer_Rotation(t *testing.T) {
	t.Parallel()
	old := testIssuer(t, "old")
	both := testIssuer(t, "new", "old")
	fresh := testIssuer(t, "new")
	c := sample()
	fromOld, fromBoth := solved(old, c), solved(both, c)
	tests := []struct {
		name   string
		is     *Issuer
		header string
		want   error
	}{
		{"both keys read the old key's", both, fromOld, nil},
		{"the new key alone refuses the old key's", fresh, fromOld, ErrBadMAC},
		{"the first key signs", fresh, fromBoth, nil},
		{"the old key refuses the new key's", old, fromBoth, ErrBadMAC},
	}
	for _, tt := range tests {
		if _, err := tt.is.Check(tt.header, c.Room, c.Network, t0); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	for _, keys := range [][][]byte{nil, {make([]byte, 31)}, {make([]byte, 32), nil}} {
		if _, err := New(keys...); err == nil {
			t.Errorf("New(%d keys) accepted", len(keys))
		}
	}
	key := DeriveKey([]byte("s"), "challenge")
	is, err := New(key)
	if err != nil {
		t.Fatal(err)
	}
	key[0] ^= 1 // New keeps its own copy
	if _, err := is.Check(solved(testIssuer(t, "s"), sample()), "concert", testNetwork, t0); err != nil {
		t.Errorf("a key changed after New: %v", err)
	}
}

func TestDeriveKey(t *testing.T) {
	t.Parallel()
	a := DeriveKey([]byte("secret"), "challenge")
	if len(a) != 32 || string(a) != string(DeriveKey([]byte("secret"), "challenge")) {
		t.Fatalf("not a stable 32-byte key: %x", a)
	}
	for _, b := range [][]byte{DeriveKey([]byte("secret"), "pass"), DeriveKey([]byte("secreT"), "challenge"), []byte("secret")} {
		if string(a) == string(b) {
			t.Errorf("two purposes or secrets share a key")
		}
	}
}

func TestResult(t *testing.T) {
	t.Parallel()
	tests := map[error]string{nil: "ok", ErrMalformed: "malformed", ErrBadMAC: "bad_mac", ErrWrongRoom: "wrong_room",
		ErrWrongNetwork: "wrong_network", ErrExpired: "expired", ErrNotEnoughWork: "not_enough_work", ErrSpent: "spent",
		errors.New("redis down"): "error"}
	for err, want := range tests {
		if got := Result(err); got != want {
			t.Errorf("Result(%v) = %q, want %q", err, got, want)
		}
	}
	if got := Result(errors.Join(errors.New("spending"), ErrSpent)); got != "spent" {
		t.Errorf("a wrapped ErrSpent is %q", got)
	}
}
