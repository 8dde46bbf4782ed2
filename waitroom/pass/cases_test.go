package pass

import (
	"crypto/ed25519"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The names every verifier in these tests expects.
const (
	testIssuer   = "waitroom"
	testAudience = "shop"
	testRoom     = "concert"
	testPath     = "/events/7/checkout"
	testTTL      = 60 * time.Second
)

// fixture holds the keys and signers the verifier cases are made with.
type fixture struct {
	now                time.Time
	cur, old, stranger ed25519.PrivateKey
	signer             *Signer // cur signs; cur and old are published
	oldSigner          *Signer // old signs, as before a rotation
	strangerSigner     *Signer // a key nobody published
	otherIssuer        *Signer // cur, under another issuer
	pass               Pass
}

func newFixture(tb testing.TB, now time.Time) *fixture {
	tb.Helper()
	f := &fixture{now: now, cur: newKey(tb), old: newKey(tb), stranger: newKey(tb)}
	f.signer = newSigner(tb, testIssuer, testTTL, f.cur, f.old)
	f.oldSigner = newSigner(tb, testIssuer, testTTL, f.old)
	f.strangerSigner = newSigner(tb, testIssuer, testTTL, f.stranger)
	f.otherIssuer = newSigner(tb, "elsewhere", testTTL, f.cur)
	// An account id with quotes and non-ASCII letters, so every verifier's
	// JSON reader and writer is put to work; a ticket near 2^51, as the
	// store issues them (microseconds since the epoch).
	f.pass = Pass{Audience: testAudience, Room: testRoom, Subject: `acct:"zoë"@example.com`, Ticket: 1_800_000_000_000_042, Path: testPath}
	return f
}

// passCase is one pass and the answer every verifier must give.
type passCase struct {
	name   string
	token  string
	room   string  // the room the verifier expects; "" any
	path   string  // the path the verifier expects; "" any
	reason string  // "" accepted, else the Reason code
	want   *Claims // the claims an accepted pass must yield, when set
}

func sign(tb testing.TB, s *Signer, p Pass, at time.Time) string {
	tb.Helper()
	tok, err := s.Sign(p, at)
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

// cases are the passes of the contract, made at f.now; the verifiers check
// them against a key set that publishes cur and old, at about f.now.
func (f *fixture) cases(tb testing.TB) []passCase {
	tb.Helper()
	now, p := f.now, f.pass
	valid := sign(tb, f.signer, p, now)
	want := Claims{Issuer: testIssuer, Audience: Audience{testAudience}, Subject: p.Subject, Room: testRoom,
		Path: testPath, Ticket: p.Ticket, IssuedAt: now.Unix(), ExpiresAt: now.Unix() + 60}
	// claims is want as JSON, edited as a map: members may go or change type.
	claims := func(edit func(m map[string]any)) string {
		m := map[string]any{"iss": want.Issuer, "aud": want.Audience[0], "sub": want.Subject,
			"room": want.Room, "path": want.Path, "tkt": want.Ticket, "iat": want.IssuedAt, "exp": want.ExpiresAt}
		edit(m)
		b, err := json.Marshal(m)
		if err != nil {
			tb.Fatal(err)
		}
		return string(b)
	}
	same := func(map[string]any) {}
	hdr := headerJSON(f.cur)
	kid := Thumbprint(pub(f.cur))
	segs := strings.Split(valid, ".")
	other := p
	other.Room = "vip"
	forged := strings.Split(sign(tb, f.signer, other, now), ".")
	nested := func(n int) string {
		return `{"alg":"EdDSA","kid":"` + kid + `","x":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`
	}
	wrongAud := p
	wrongAud.Audience = "blog"
	return []passCase{
		{"valid", valid, testRoom, testPath, "", &want},
		{"valid for any room", valid, "", "", "", nil},
		{"audience in an array", forge(f.cur, hdr, claims(func(m map[string]any) { m["aud"] = []string{"blog", testAudience} })), testRoom, testPath, "", nil},
		{"old key still published", sign(tb, f.oldSigner, p, now), testRoom, testPath, "", nil},
		{"expired within the leeway", sign(tb, f.signer, p, now.Add(-63*time.Second)), testRoom, testPath, "", nil},
		{"header nested 32 deep", forge(f.cur, nested(32), claims(same)), testRoom, testPath, "", nil},
		{"expired", sign(tb, f.signer, p, now.Add(-100*time.Second)), testRoom, testPath, "expired", nil},
		{"issued in the future", forge(f.cur, hdr, claims(func(m map[string]any) { m["iat"], m["exp"] = now.Unix()+120, now.Unix()+180 })), testRoom, testPath, "not_yet_valid", nil},
		{"wrong issuer", sign(tb, f.otherIssuer, p, now), testRoom, testPath, "issuer", nil},
		{"wrong audience", sign(tb, f.signer, wrongAud, now), testRoom, testPath, "audience", nil},
		{"no audience", forge(f.cur, hdr, claims(func(m map[string]any) { delete(m, "aud") })), testRoom, testPath, "audience", nil},
		{"wrong room", valid, "vip", testPath, "room", nil},
		{"wrong path", valid, testRoom, "/events/8/checkout", "path", nil},
		{"the path in another spelling", valid, testRoom, "/events/7/check%6Fut", "path", nil},
		{"valid for any path", valid, testRoom, "", "", nil},
		{"no path claim", forge(f.cur, hdr, claims(func(m map[string]any) { delete(m, "path") })), testRoom, testPath, "path", nil},
		{"tampered payload", segs[0] + "." + forged[1] + "." + segs[2], "vip", testPath, "signature", nil},
		{"tampered signature", segs[0] + "." + segs[1] + "." + flipByte(tb, segs[2]), testRoom, testPath, "signature", nil},
		{"signed by another key under this kid", forge(f.stranger, hdr, claims(same)), testRoom, testPath, "signature", nil},
		{"short signature", segs[0] + "." + segs[1] + "." + b64.EncodeToString(make([]byte, 32)), testRoom, testPath, "signature", nil},
		{"non-canonical base64", segs[0] + "." + segs[1] + "." + bumpLast(segs[2]), testRoom, testPath, "malformed", nil},
		{"padding", valid + "==", testRoom, testPath, "malformed", nil},
		{"alg none", forge(f.cur, `{"alg":"none","kid":"`+kid+`"}`, claims(same)), testRoom, testPath, "algorithm", nil},
		{"alg none, no signature", segs0(`{"alg":"none"}`) + "." + segs[1] + ".", testRoom, testPath, "malformed", nil},
		{"HS256 keyed with the public key", forgeHMAC(pub(f.cur), `{"alg":"HS256","kid":"`+kid+`","typ":"JWT"}`, claims(same)), testRoom, testPath, "algorithm", nil},
		{"ES256 claimed for an Ed25519 key", forge(f.cur, `{"alg":"ES256","kid":"`+kid+`","typ":"JWT"}`, claims(same)), testRoom, testPath, "algorithm", nil},
		{"no alg", forge(f.cur, `{"kid":"`+kid+`"}`, claims(same)), testRoom, testPath, "algorithm", nil},
		{"crit", forge(f.cur, `{"alg":"EdDSA","kid":"`+kid+`","crit":["exp"]}`, claims(same)), testRoom, testPath, "malformed", nil},
		{"no kid", forge(f.cur, `{"alg":"EdDSA"}`, claims(same)), testRoom, testPath, "malformed", nil},
		{"unknown kid", sign(tb, f.strangerSigner, p, now), testRoom, testPath, "unknown_key", nil},
		{"header nested 33 deep", forge(f.cur, nested(33), claims(same)), testRoom, testPath, "malformed", nil},
		{"header not JSON", segs0("not json") + "." + segs[1] + "." + segs[2], testRoom, testPath, "malformed", nil},
		{"claims not an object", forge(f.cur, hdr, `[1,2]`), testRoom, testPath, "malformed", nil},
		{"exp missing", forge(f.cur, hdr, claims(func(m map[string]any) { delete(m, "exp") })), testRoom, testPath, "malformed", nil},
		{"exp a string", forge(f.cur, hdr, claims(func(m map[string]any) { m["exp"] = strconv.FormatInt(want.ExpiresAt, 10) })), testRoom, testPath, "malformed", nil},
		{"signed but too long", forge(f.cur, hdr, claims(func(m map[string]any) { m["sub"] = strings.Repeat("x", 3000) })), testRoom, testPath, "malformed", nil},
		{"not a JWS", "hello", testRoom, testPath, "malformed", nil},
		{"four segments", valid + "." + segs[2], testRoom, testPath, "malformed", nil},
		{"a plus sign", strings.Replace(valid, ".", "+.", 1), testRoom, testPath, "malformed", nil},
	}
}

func segs0(s string) string { return b64.EncodeToString([]byte(s)) }

// flipByte changes one byte of a base64url segment, keeping it canonical.
func flipByte(tb testing.TB, seg string) string {
	tb.Helper()
	b, err := b64.DecodeString(seg)
	if err != nil {
		tb.Fatal(err)
	}
	b[10] ^= 0x01
	return b64.EncodeToString(b)
}

// bumpLast sets a trailing bit of a 64-byte signature's encoding: the bytes
// decode the same, but the text is not their canonical encoding.
func bumpLast(seg string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	i := strings.IndexByte(alphabet, seg[len(seg)-1])
	return seg[:len(seg)-1] + string(alphabet[i|1])
}
