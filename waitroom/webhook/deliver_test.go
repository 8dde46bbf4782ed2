package webhook

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter_ReadsSecondsAndDatesWithinBounds(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"7", 7 * time.Second},
		{" 7 ", 7 * time.Second},
		{"-7", 0},
		{"1.5", 0},
		{"soon", 0},
		{"99999999999999999999999", maxRetryAfter},
		{"999999999", maxRetryAfter},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{now.Add(365 * 24 * time.Hour).Format(http.TimeFormat), maxRetryAfter},
	}
	for _, tc := range tests {
		if got := retryAfter(tc.in, now); got != tc.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestBackoff_DoublesWithJitterWithinMax(t *testing.T) {
	t.Parallel()
	d := &Dispatcher{cfg: Delivery{BackoffBase: time.Second, BackoffMax: 10 * time.Second}}
	tests := []struct {
		n        int
		after    time.Duration
		min, max time.Duration
	}{
		{1, 0, 800 * time.Millisecond, 1200 * time.Millisecond},
		{2, 0, 1600 * time.Millisecond, 2400 * time.Millisecond},
		{3, 0, 3200 * time.Millisecond, 4800 * time.Millisecond},
		{4, 0, 6400 * time.Millisecond, 9600 * time.Millisecond},
		{5, 0, 8 * time.Second, 10 * time.Second},
		{1000, 0, 8 * time.Second, 10 * time.Second},
		{1, 5 * time.Second, 5 * time.Second, 5 * time.Second},
		{1, time.Hour, 10 * time.Second, 10 * time.Second},
	}
	for _, tc := range tests {
		for range 200 {
			if got := d.backoff(tc.n, tc.after); got < tc.min || got > tc.max {
				t.Fatalf("backoff(%d, %v) = %v, want from %v to %v", tc.n, tc.after, got, tc.min, tc.max)
			}
		}
	}
}

func TestMessageID_DerivedFromTheKey(t *testing.T) {
	t.Parallel()
	a, b := MessageID("room:\"concert\":queue.started:1"), MessageID("room:\"concert\":queue.started:1")
	c, r1, r2 := MessageID("room:\"concert\":queue.started:2"), MessageID(""), MessageID("")
	if a != b || a == c || r1 == r2 || len(a) != 28 || a[:4] != "msg_" {
		t.Errorf("ids %q %q %q %q %q: want one per key, random without", a, b, c, r1, r2)
	}
	if Key(QueueStarted, "a:b", "1") == Key(QueueStarted, "a", "b:1") {
		t.Error("two rooms' keys meet")
	}
}
