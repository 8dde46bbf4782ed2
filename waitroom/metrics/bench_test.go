package metrics_test

import (
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/memstore"
	"github.com/waitroom/waitroom/waitroom/metrics"
)

// BenchmarkMetrics_Request is the cost the gate adds to every request.
func BenchmarkMetrics_Request(b *testing.B) {
	m := metrics.New()
	b.ReportAllocs()
	for b.Loop() {
		m.Request(room, "admitted")
	}
}

// BenchmarkMetrics_RequestParallel: every core counting into one room, the
// busy room at 10:00.
func BenchmarkMetrics_RequestParallel(b *testing.B) {
	m := metrics.New()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Request(room, "queued")
		}
	})
}

func BenchmarkMetrics_Upstream(b *testing.B) {
	m := metrics.New()
	b.ReportAllocs()
	for b.Loop() {
		m.Upstream("shop", 200, 20*time.Millisecond)
	}
}

// BenchmarkStore_Decide compares a bare memstore with the timed one, to show
// what the wrapper costs on the gate's store call.
func BenchmarkStore_Decide(b *testing.B) {
	for _, bc := range []struct {
		name string
		wrap func(waitroom.Store) waitroom.Store
	}{
		{"bare", func(s waitroom.Store) waitroom.Store { return s }},
		{"timed", func(s waitroom.Store) waitroom.Store { return metrics.Store(s, metrics.New()) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			st := bc.wrap(memstore.New())
			v := waitroom.Visitor{ID: waitroom.NewVisitorID()}
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := st.Decide(ctx, room, lim, v, waitroom.JoinTicket); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
