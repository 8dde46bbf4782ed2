package metrics

import (
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/waitroom/waitroom/waitroom"
)

// What watching costs a newcomer's request: Seen (access type, device
// class, page view) and Present (the distinct-visitor sketch).
func BenchmarkSeen(b *testing.B) {
	m := New()
	m.Declare("concert", false)
	r := httptest.NewRequest("GET", "/events/1", nil)
	r.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	r.Header.Set("User-Agent", "Mozilla/5.0 (Linux; Android 14; SM-S918N) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36")
	s := waitroom.Sighting{Outcome: waitroom.OutcomeJoined, Arrival: true, Pages: true, Request: r}
	b.ReportAllocs()
	for b.Loop() {
		m.Seen("concert", s)
	}
}

func BenchmarkPresent(b *testing.B) {
	m := New()
	m.Declare("concert", false)
	ids := make([]string, 1024)
	for i := range ids {
		ids[i] = waitroom.NewVisitorID() + strconv.Itoa(i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m.Present("concert", ids[i&1023])
		i++
	}
}

func BenchmarkDeviceClass(b *testing.B) {
	ua := "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"
	b.ReportAllocs()
	for b.Loop() {
		DeviceClass(ua)
	}
}
