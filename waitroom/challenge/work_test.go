package challenge

import (
	"crypto/sha256"
	"strconv"
	"testing"
)

func TestLeadingZeroBits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		b    []byte
		want int
	}{
		{nil, 0},
		{[]byte{0x80}, 0},
		{[]byte{0x01}, 7},
		{[]byte{0x00}, 8},
		{[]byte{0x00, 0x00, 0x3f}, 18},
		{[]byte{0, 0, 0, 0, 0, 0, 0, 0, 0x10}, 67},
		{[]byte{0, 0, 0, 0, 0, 0, 0x02, 0xff}, 54},
		{make([]byte, 32), 256},
	}
	for _, tt := range tests {
		if got := LeadingZeroBits(tt.b); got != tt.want {
			t.Errorf("LeadingZeroBits(%x) = %d, want %d", tt.b, got, tt.want)
		}
	}
}

// TestSolve checks that Solve returns the first counter with enough work,
// the same answer challenge.js must find.
func TestSolve(t *testing.T) {
	t.Parallel()
	prefix := testIssuer(t).Issue(sample())
	for bits := range 13 {
		nonce := Solve(prefix, bits)
		n, err := strconv.ParseUint(nonce, 10, 64)
		if err != nil || WorkBits(prefix, nonce) < bits {
			t.Fatalf("Solve(%d) = %q", bits, nonce)
		}
		for i := range n {
			if WorkBits(prefix, strconv.FormatUint(i, 10)) >= bits {
				t.Fatalf("Solve(%d) = %d, but %d does", bits, n, i)
			}
		}
	}
	if got := Solve(prefix, -4); got != "0" {
		t.Errorf("Solve(-4) = %q", got)
	}
}

func TestWorkBits(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256([]byte("abc" + "123"))
	if got, want := WorkBits("abc", "123"), LeadingZeroBits(sum[:]); got != want {
		t.Errorf("WorkBits = %d, want %d", got, want)
	}
	// Known answers, checked with coreutils:
	//   printf waitroom7593 | sha256sum     -> 00003f28…
	//   printf waitroom160009 | sha256sum   -> 000000ae…
	for nonce, want := range map[string]int{"7593": 18, "160009": 24} {
		if got := WorkBits("waitroom", nonce); got != want {
			t.Errorf("WorkBits(waitroom, %s) = %d, want %d", nonce, got, want)
		}
	}
	if got := Solve("waitroom", 16); got != "7593" {
		t.Errorf("Solve(waitroom, 16) = %s, want 7593", got)
	}
}
