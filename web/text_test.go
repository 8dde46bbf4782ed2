package web

import (
	"testing"
	"time"
)

func TestETAText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		eta    time.Duration
		known  bool
		en, ko string
	}{
		{0, false, "Calculating…", "계산 중…"},
		{0, true, "Less than a minute", "1분 미만"},
		{59 * time.Second, true, "Less than a minute", "1분 미만"},
		{59500 * time.Millisecond, true, "About 1 minute", "약 1분"},
		{61 * time.Second, true, "About 2 minutes", "약 2분"},
		{59 * time.Minute, true, "About 59 minutes", "약 59분"},
		{60 * time.Minute, true, "About 1 h", "약 1시간"},
		{83 * time.Minute, true, "About 1 h 25 min", "약 1시간 25분"},
	}
	for _, tt := range tests {
		if got := etaText("en", tt.eta, tt.known); got != tt.en {
			t.Errorf("etaText(en, %v) = %q, want %q", tt.eta, got, tt.en)
		}
		if got := etaText("ko", tt.eta, tt.known); got != tt.ko {
			t.Errorf("etaText(ko, %v) = %q, want %q", tt.eta, got, tt.ko)
		}
	}
}

func TestCountAndGroup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		lang, key string
		n         int64
		want      string
	}{
		{"en", "ahead", 0, "You are next"},
		{"en", "ahead", 1, "1 person ahead"},
		{"en", "ahead", 2, "2 people ahead"},
		{"en", "behind", 0, "0 people behind"},
		{"en", "waiting", 1234567, "1,234,567 waiting in total"},
		{"ko", "ahead", 0, "다음 차례입니다"},
		{"ko", "ahead", 1, "앞에 1명"},
		{"ko", "behind", 12345, "뒤에 12,345명"},
		{"ko", "behind", -3, "뒤에 0명"},
	}
	for _, tt := range tests {
		if got := count(tt.lang, tt.key, tt.n); got != tt.want {
			t.Errorf("count(%s, %s, %d) = %q, want %q", tt.lang, tt.key, tt.n, got, tt.want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 100000: "100,000", -1: "0"} {
		if got := group(n); got != want {
			t.Errorf("group(%d) = %q, want %q", n, got, want)
		}
	}
}

// Every key of one language must exist in the other, or the page's script
// would show "undefined" where the server showed words.
func TestMessages_SameKeys(t *testing.T) {
	t.Parallel()
	for key := range messages["en"] {
		if _, ok := messages["ko"][key]; !ok && key[len(key)-1] != '0' && key[len(key)-1] != '1' {
			t.Errorf("ko lacks %q", key)
		}
	}
	for key := range messages["ko"] {
		if _, ok := messages["en"][key]; !ok {
			t.Errorf("en lacks %q", key)
		}
	}
}

func TestEtaRangeText(t *testing.T) {
	t.Parallel()
	cases := []struct {
		lang      string
		eta, most time.Duration
		want      string
	}{
		{"en", 5 * time.Minute, 0, "About 5 minutes"},
		{"en", 5 * time.Minute, 8 * time.Minute, "5 to 8 minutes"},
		{"ko", 5 * time.Minute, 8 * time.Minute, "약 5~8분"},
		{"en", 20 * time.Second, 3 * time.Minute, "1 to 3 minutes"},
		{"en", 30 * time.Minute, 90 * time.Minute, "About 1 h 30 min"},
		{"en", 5*time.Minute - time.Second, 5 * time.Minute, "About 5 minutes"},
	}
	for _, c := range cases {
		if got := etaRangeText(c.lang, c.eta, c.most, true); got != c.want {
			t.Errorf("etaRangeText(%s, %v, %v) = %q, want %q", c.lang, c.eta, c.most, got, c.want)
		}
	}
}
