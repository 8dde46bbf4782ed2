package waitroom

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func previewKeys(t *testing.T, secrets ...string) *Previews {
	t.Helper()
	var pairs []KeyPair
	for _, s := range secrets {
		pairs = append(pairs, KeyPair{Hash: bytes.Repeat([]byte(s), 32)})
	}
	p, err := PreviewsFromTickets(pairs)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A link opens for its room until it expires, under every configured key
// (a rotation carries links), and under no other key; every byte changed
// makes it invalid.
func TestPreviews_SealAndOpen(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	pv := Preview{Room: "concert", State: AnswerWaiting, Position: 42, Lang: "ko", Expires: now.Add(time.Minute).Unix()}
	old := previewKeys(t, "o")
	s, err := old.Seal(pv)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := old.Open(s, "concert", now); err != nil || got != pv {
		t.Fatalf("open: %+v %v", got, err)
	}
	if got, err := previewKeys(t, "n", "o").Open(s, "concert", now); err != nil || got != pv {
		t.Fatalf("open after a rotation that keeps the old key: %+v %v", got, err)
	}
	for name, try := range map[string]func() error{
		"other keys":    func() error { _, err := previewKeys(t, "n").Open(s, "concert", now); return err },
		"other room":    func() error { _, err := old.Open(s, "festival", now); return err },
		"empty":         func() error { _, err := old.Open("", "concert", now); return err },
		"not base64url": func() error { _, err := old.Open(s+"!", "concert", now); return err },
		"MAC only":      func() error { _, err := old.Open(s[len(s)-43:], "concert", now); return err },
		"too long a life": func() error {
			far := pv
			far.Expires = now.Add(MaxPreviewTTL + time.Hour).Unix()
			fs, _ := old.Seal(far)
			_, err := old.Open(fs, "concert", now)
			return err
		},
	} {
		if err := try(); !errors.Is(err, ErrPreviewInvalid) {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
	for i := range s {
		b := []byte(s)
		b[i] ^= 1
		if _, err := old.Open(string(b), "concert", now); err == nil {
			t.Fatalf("byte %d changed still opens", i)
		}
	}
	if _, err := old.Open(s, "concert", now.Add(time.Minute)); !errors.Is(err, ErrPreviewExpired) {
		t.Errorf("at its expiry: %v, want expired", err)
	}
}

// Sealing checks what a link may say, as the admin API does.
func TestPreviews_SealChecks(t *testing.T) {
	p := previewKeys(t, "k")
	exp := time.Now().Add(time.Minute).Unix()
	for _, pv := range []Preview{
		{Room: "", State: AnswerWaiting, Position: 1, Expires: exp},
		{Room: "r", State: AnswerAdmitted, Expires: exp},
		{Room: "r", State: AnswerWaiting, Position: 0, Expires: exp},
		{Room: "r", State: AnswerWaiting, Position: MaxPreviewPosition + 1, Expires: exp},
		{Room: "r", State: AnswerClosed, Position: 3, Expires: exp},
		{Room: "r", State: AnswerClosed, Lang: "a-very-long-tag", Expires: exp},
	} {
		if _, err := p.Seal(pv); err == nil {
			t.Errorf("sealed %+v", pv)
		}
	}
	if _, err := NewPreviews([]byte("short")); err == nil {
		t.Error("a short key was taken")
	}
}
