package waitroom

import (
	"strings"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	t.Parallel()
	good := map[string]Rate{
		"300/m":     {300, time.Minute},
		"5/s":       {5, time.Second},
		"1000/h":    {1000, time.Hour},
		"unlimited": {},
	}
	for in, want := range good {
		got, err := ParseRate(in)
		if err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
		if got.String() != in {
			t.Errorf("Rate(%q).String() = %q", in, got.String())
		}
	}
	for _, in := range []string{"", "300", "300 per minute", "0/m", "-5/s", "1.5/s", "5/d", "/m", "5/", "1000000001/s", "unlimited/s"} {
		if r, err := ParseRate(in); err == nil {
			t.Errorf("ParseRate(%q) = %v, want an error", in, r)
		}
	}
}

func TestRate_BurstAndPerSecond(t *testing.T) {
	t.Parallel()
	r, _ := ParseRate("300/m")
	if r.PerSecond() != 5 || r.DefaultBurst() != 5 {
		t.Fatalf("300/m: %v per second, burst %d", r.PerSecond(), r.DefaultBurst())
	}
	r, _ = ParseRate("6/m")
	if r.DefaultBurst() != 1 {
		t.Fatalf("6/m: burst %d, want at least 1", r.DefaultBurst())
	}
	if !(Rate{}).IsUnlimited() || (Rate{}).DefaultBurst() != 0 {
		t.Fatal("zero rate must be unlimited with no burst")
	}
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"300/m", "5/s", "1/h", "unlimited", "0/m", "9999999999/s", "", "/", "1/m/s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate(s)
		if err != nil {
			if !strings.Contains(err.Error(), "want") {
				t.Fatalf("error %q does not say what is wanted", err)
			}
			return
		}
		if !r.IsUnlimited() && (r.N < 1 || r.N > maxRateN || r.PerSecond() <= 0) {
			t.Fatalf("accepted %q as %+v", s, r)
		}
		back, err := ParseRate(r.String())
		if err != nil || back != r {
			t.Fatalf("round trip of %q: %v, %v", s, back, err)
		}
	})
}
