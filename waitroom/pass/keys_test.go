package pass

import (
	"bytes"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/hex"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestParsePrivateKey(t *testing.T) {
	t.Parallel()
	k := newKey(t)
	got, err := ParsePrivateKey(pemOf(t, k))
	if err != nil {
		t.Fatal(err)
	}
	if !k.Equal(got) {
		t.Fatal("the key read back differs")
	}
}

// A key written by openssl itself loads, and its public half is the one
// openssl derives.
func TestLoadPrivateKey_OpenSSL(t *testing.T) {
	t.Parallel()
	openssl := lookPath(t, "openssl")
	path := filepath.Join(t.TempDir(), "pass.pem")
	if out, err := exec.Command(openssl, "genpkey", "-algorithm", "ed25519", "-out", path).CombinedOutput(); err != nil {
		t.Fatalf("openssl genpkey: %v\n%s", err, out)
	}
	k, err := LoadPrivateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	der, err := exec.Command(openssl, "pkey", "-in", path, "-pubout", "-outform", "DER").Output()
	if err != nil {
		t.Fatalf("openssl pkey: %v", err)
	}
	ed := k.(ed25519.PrivateKey)
	if want := der[len(der)-ed25519.PublicKeySize:]; !bytes.Equal(pub(ed), want) {
		t.Fatalf("public key %x, openssl says %x", []byte(pub(ed)), want)
	}
}

func TestParsePrivateKey_Refused(t *testing.T) {
	t.Parallel()
	ec, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	x, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	good := pemOf(t, newKey(t))
	block, _ := pem.Decode(good)
	corrupt := bytes.Clone(block.Bytes)
	corrupt[5] ^= 0xff
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "no PEM block"},
		{"not PEM", []byte("hello"), "no PEM block"},
		{"two keys", append(bytes.Clone(good), good...), "more than one PEM block"},
		{"encrypted", pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: block.Bytes}), "encrypted"},
		{"public key", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: block.Bytes}), `got "PUBLIC KEY"`},
		{"OpenSSH", pem.EncodeToMemory(&pem.Block{Type: "OPENSSH PRIVATE KEY", Bytes: block.Bytes}), `got "OPENSSH PRIVATE KEY"`},
		{"corrupt", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: corrupt}), "not a valid PKCS#8"},
		{"ECDSA P-384", pemOf(t, ec), "got ECDSA on P-384"},
		{"X25519", pemOf(t, x), "got X25519"},
	} {
		_, err := ParsePrivateKey(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
			continue
		}
		if leaks(err.Error(), tc.in) {
			t.Errorf("%s: the error shows key material: %v", tc.name, err)
		}
	}
}

// leaks reports whether msg holds any 8-byte run of the PEM's base64 text
// or of its bytes in hex.
func leaks(msg string, pemBytes []byte) bool {
	for _, line := range strings.Split(string(pemBytes), "\n") {
		if strings.HasPrefix(line, "-----") {
			continue
		}
		for i := 0; i+8 <= len(line); i++ {
			if strings.Contains(msg, line[i:i+8]) {
				return true
			}
		}
	}
	if b, _ := pem.Decode(pemBytes); b != nil {
		h := hex.EncodeToString(b.Bytes)
		for i := 0; i+16 <= len(h); i += 2 {
			if strings.Contains(msg, h[i:i+16]) {
				return true
			}
		}
	}
	return false
}

func TestLoadPrivateKey_NamesTheFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := writeFile(t, dir, "big.pem", bytes.Repeat([]byte("A"), maxKeyFile+1))
	garbage := writeFile(t, dir, "garbage.pem", []byte("not a key"))
	for _, path := range []string{filepath.Join(dir, "missing.pem"), big, garbage, dir} {
		_, err := LoadPrivateKey(path)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v, want an error naming the file", path, err)
		}
		if err != nil && strings.Count(err.Error(), path) != 1 {
			t.Errorf("%s: the path is repeated: %v", path, err)
		}
	}
}

// RFC 8037 appendix A: the key, its thumbprint and a signature.
func TestThumbprint_RFC8037(t *testing.T) {
	t.Parallel()
	d, _ := b64.DecodeString("nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A")
	k := ed25519.NewKeyFromSeed(d)
	if x := b64.EncodeToString(pub(k)); x != "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" {
		t.Fatalf("x = %s", x)
	}
	if got := Thumbprint(pub(k)); got != "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k" {
		t.Fatalf("thumbprint %s", got)
	}
	in := "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc"
	sig := b64.EncodeToString(ed25519.Sign(k, []byte(in)))
	if sig != "hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg" {
		t.Fatalf("signature %s", sig)
	}
}

// lookPath finds a program the test needs: missing, the test is skipped,
// unless CI=true, where it fails.
func lookPath(tb testing.TB, name string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s is required on CI: %v", name, err)
		}
		tb.Skipf("%s not found (%v); CI=true makes this a failure", name, err)
	}
	return p
}
